"""Tests of the page `loci ui` serves, in a real browser."""
