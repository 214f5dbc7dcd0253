"""The shared model (dlbench.core), the `dlbench` command (dlbench.cli), and the runner and
report packages, installed as dlbench.runner and dlbench.report from the checkout's runner/
and report/ folders (pyproject's package-dir)."""

# Imports nothing: dlbench.core stays the ground and dlbench.cli the top. In a checkout,
# runner/ and report/ sit beside this folder; the checkout's root on this package's path
# makes `dlbench.runner` and `dlbench.report` those folders however the checkout is reached
# (PYTHONPATH, the editable install, a worker started with -m in the checkout). Installed
# from a wheel they are subfolders of this one (and site-packages is not added).
_cut = max(__path__[0].rfind("/"), __path__[0].rfind("\\"))
_root = __path__[0][:_cut] if _cut > 0 else "."
if not _root.endswith(("site-packages", "dist-packages")):
    __path__.append(_root)
del _cut, _root
