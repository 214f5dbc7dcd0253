"""Storage: the results layout, tables, releases, code records and archives, written
atomically and read back by one reader."""
