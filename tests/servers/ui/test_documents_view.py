"""How the page names documents of one name: by the shortest tail of their paths that tells them apart."""

from __future__ import annotations

from loci.servers.ui.documents_view import shown_paths


def test_documents_of_one_name_are_shown_by_the_folders_that_tell_them_apart() -> None:
    paths = [
        "/usr/share/doc/bash/copyright",
        "/usr/share/doc/dpkg/copyright",
        "/home/ana/notes/README.md",
        "/home/ana/src/a/docs/README.md",
        "/home/ana/src/b/docs/README.md",
        "/home/ana/plan.txt",
        None,
    ]
    assert shown_paths(paths) == [
        "bash/copyright",
        "dpkg/copyright",
        "notes/README.md",
        "a/docs/README.md",
        "b/docs/README.md",
        "plan.txt",
        None,
    ]


def test_a_path_that_is_the_tail_of_another_is_shown_whole() -> None:
    assert shown_paths(["/srv/copyright", "/copyright"]) == ["srv/copyright", "/copyright"]
