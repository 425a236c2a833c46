"""Sphinx configuration: the documentation site is the Markdown pages of docs/, read by MyST.

Built strict (`python -m sphinx -W --keep-going -b html docs docs/_build`), so a broken link, a
page left out of the table of contents or a heading that skips a level fails the build;
tests/test_docs.py runs that build.
"""

project = "Loci"
author = "The Loci developers"
extensions = ["myst_parser"]
source_suffix = {".md": "markdown"}
exclude_patterns = ["_build"]
# Headings down to ### get anchors, so pages link to each other's sections (`memory.md#importing-…`).
myst_heading_anchors = 3
html_theme = "furo"
html_title = "Loci"
# The search index and the pages need no network: no fonts or scripts from elsewhere.
html_permalinks_icon = "#"
