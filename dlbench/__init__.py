"""The shared model (dlbench.core), the `dlbench` command (dlbench.cli), and the runner and
report packages, installed as dlbench.runner and dlbench.report from the checkout's runner/
and report/ folders (pyproject's package-dir; setup.py finds their subpackages). A checkout
works through its editable install (`make` runs `pip install -e .`), whose finder maps those
names to the folders; a wheel holds them as subfolders of this one."""
