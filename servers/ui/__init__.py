"""The page `loci ui` serves: a local web app that draws the memory graph and shows runs, procedures and documents."""

__all__: list[str] = []
