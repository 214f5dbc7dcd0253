"""The build step: reads results/ and renders templates/ into site_src/; never measures."""
