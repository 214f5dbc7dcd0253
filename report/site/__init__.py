"""The whole site: build, cache, errata, publishing, mkdocs hooks, subcommands."""
