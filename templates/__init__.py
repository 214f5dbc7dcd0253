"""The site's sources, installed as dlbench.templates: page templates (*.md.j2), the assets
copied into every site, mkdocs-material overrides, and the mkdocs config (mkdocs.yml, a link
to the checkout's own, copied into a wheel). Read through dlbench.core.storage.project_files."""
