"""What a site version is built from: a release's (or draft's) runs, summaries."""
