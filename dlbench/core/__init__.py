"""The shared model, imported by the runner, the report and the CLI, importing only itself:
declarations (what is measured), machine (its kind and bound), storage (the results layout,
tables and releases), judging (the verdict rule and its one outcome vocabulary), text."""
