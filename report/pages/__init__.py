"""The site's pages: each page module declares its pages in the registry."""
