"""What a line gives for the thing asked, and `done` only for that value: no model, the lines as files write them."""

from __future__ import annotations

from loci.runtime.reading.fields import (
    addresses,
    answer_kind,
    asked_names,
    counted,
    counts,
    definition,
    field,
    heading,
    meant_names,
    names,
    options,
    persons,
    references,
    section,
)
from loci.runtime.reading.spans import Span, candidate_spans
from loci.runtime.reading.values import not_the_value

SHOWN = (
    "doc:1 lines 32-99:\n"
    "32| DEFAULT_ENTROPY = 32  # number of bytes to return by default\n"
    "42| COPY_BUFSIZE = 1024 * 1024 if _WINDOWS else 64 * 1024\n"
    "45|         nbytes = DEFAULT_ENTROPY\n"
    "53| __author__ = 'Ka-Ping Yee <ping@zesty.ca>'\n"
    "98| BPF = 53        # Number of bits in a float\n"
    "99| RECIP_BPF = 2 ** -BPF\n"
)
MANUAL = (
    "doc:1 lines 150-170:\n"
    "150|        -r, --reverse\n"
    "152|        -S     sort by file size, largest first\n"
    "154|        --sort=WORD\n"
    "169|        -t     sort by time, newest first; see --time\n"
)


def test_a_line_gives_a_names_value_a_fields_value_and_a_manuals_options() -> None:
    assert definition("BPF = 53        # Number of bits in a float", "BPF") == "53"
    assert definition("RECIP_BPF = 2 ** -BPF", "BPF") is None and definition("x == 3", "x") is None
    assert field("Upstream-Name: GNU Gzip") == ("Upstream-Name", "GNU Gzip", "")
    assert field("# Written by Greg Ward <gward@python.net>") == ("Written by", "Greg Ward <gward@python.net>", "")
    assert field("[17 May 2023] Caroline: hello") is None  # a conversation turn is no field
    assert names("1995-2017 Bdale Garbee <bdale@gag.com>") == "Bdale Garbee"
    assert options("       -S     sort by file size, largest first") == ["-S"]
    assert options("  -a, --all   do not ignore entries") == ["-a", "--all"] and options("sort by -S") == []


def test_a_question_names_what_it_asks_about_in_its_own_words_too() -> None:
    assert asked_names("What is the value of BPF?") == ["BPF"] and asked_names("Who wrote uuid?") == []
    lines = [row.split("| ", 1)[1] for row in SHOWN.splitlines()[1:]]
    assert "COPY_BUFSIZE" in meant_names("How large is shutil's copy buffer size?", lines)
    assert "DEFAULT_ENTROPY" in meant_names("How many bytes of entropy are used by default?", lines)
    assert answer_kind("Which ls option sorts by size?") == "option"
    assert answer_kind("Which exception does check_call raise?") == "exception"


def test_the_candidates_are_the_value_the_option_or_the_field_asked_for() -> None:
    assert candidate_spans(SHOWN, "What is the value of BPF?") == [Span("53", "doc:1", 98)]
    assert candidate_spans(SHOWN, "How large is the copy buffer size?")[0].text.endswith("64 * 1024")
    assert candidate_spans(SHOWN, "How many bits in a float?") == [Span("53", "doc:1", 98)]  # its comment
    assert [s.text for s in candidate_spans(SHOWN, "Who wrote the uuid module?")][0] == "Ka-Ping Yee"
    assert candidate_spans(MANUAL, "Which ls option sorts by file size, largest first?") == [Span("-S", "doc:1", 152)]
    assert candidate_spans(SHOWN, "How are you today?") == []


def test_done_needs_the_value_the_asked_names_line_assigns() -> None:
    asked = "What is the value of COPY_BUFSIZE?"
    assert "not the value" in (not_the_value("1024", SHOWN, asked) or "")
    assert not_the_value("64 * 1024, or 1024 * 1024 on Windows", SHOWN, asked) is None
    assert "not the value" in (not_the_value("2", SHOWN, "What is the value of BPF?") or "")
    assert not_the_value("53", SHOWN, "What is the value of BPF?") is None
    raised = "Which exception does check_call raise?"
    assert "names none" in (not_the_value("child_exception_type(err_msg)", SHOWN, raised) or "")
    assert not_the_value("CalledProcessError", SHOWN, raised) is None


COPYRIGHT = (
    "doc:1 lines 1-12:\n"
    "1| Format: https://www.debian.org/doc/packaging-manuals/copyright-format/1.0/\n"
    "4|  This package is maintained by Michael Stone <mstone@debian.org>.\n"
    "6| Files: *\n"
    "7| Copyright: (C) 1984-2008 Free Software Foundation, Inc.\n"
    "11| Files: lib/regex.c\n"
    "12| Copyright: (C) 2002 Isamu Hasegawa\n"
)


def test_a_line_names_people_before_their_address_and_after_by() -> None:
    assert persons(" This package was put together by Matthias Klose <doko@debian.org>.") == ["Matthias Klose"]
    assert persons(" This package was initially debianized by Brendan O'Dea <bod@debian.org>") == ["Brendan O'Dea"]
    assert persons("Upstream-Contact: Mark Nudelman <markn@greenwoodsoftware.com>") == ["Mark Nudelman"]
    assert persons(" as published by the Free Software Foundation") == []  # "by the ...": no one's name
    assert persons(" THIS SOFTWARE IS PROVIDED BY THE REGENTS") == []


def test_a_who_question_is_answered_by_the_person_its_best_line_names() -> None:
    spans = candidate_spans(COPYRIGHT, "Who maintains the Debian coreutils package?")
    assert spans == [Span("Michael Stone", "doc:1", 4)]


def test_of_lines_with_one_key_the_first_answers_and_a_key_must_say_a_word_not_only_the_files_name() -> None:
    spans = candidate_spans(
        COPYRIGHT, "Who holds the copyright of coreutils?", documents=["/usr/share/doc/coreutils/copyright"]
    )
    assert spans[0] == Span("Free Software Foundation, Inc", "doc:1", 7)
    ftplib = "doc:1 lines 51-53:\n51| FTP_PORT = 21\n53| MAXLINE = 8192\n"
    asked = "How long may a line be that ftplib reads from the FTP server?"
    assert candidate_spans(ftplib, asked, documents=["/usr/lib/python3.11/ftplib.py"]) == []
    cookies = "doc:1 lines 80-80:\n80| EPOCH_YEAR = 1970\n"
    assert candidate_spans(cookies, "From which year does the cookie jar count time?") == [Span("1970", "doc:1", 80)]
    code = "doc:1 lines 212-212:\n212|         line = self.file.readline(self.maxline + 1)\n"
    assert candidate_spans(code, "How long may a line be?") == []  # code is no field's value


def test_a_constants_comment_says_what_it_is() -> None:
    lines = [row.split("| ", 1)[1] for row in SHOWN.splitlines()[1:]]
    asked = "How many bytes of randomness does the secrets module use by default?"
    assert meant_names(asked, lines) == ["DEFAULT_ENTROPY"]
    assert candidate_spans(SHOWN, asked) == [Span("32", "doc:1", 32)]


def test_a_named_option_is_answered_by_its_other_names_and_an_exception_by_the_one_the_question_says() -> None:
    tar = "doc:1 lines 300-754:\n300|        --overwrite-dir\n753|        -C, --directory=DIR\n"
    assert candidate_spans(tar, "Which tar option is --directory?") == [Span("-C", "doc:1", 753)]
    shutil = (
        "doc:1 lines 236-284:\n"
        '236|         raise SameFileError("{!r} and {!r} are the same file".format(src, dst))\n'
        "284|                     raise FileNotFoundError(f'Directory does not exist: {dst}') from e\n"
    )
    asked = "Which exception does shutil raise when source and destination are the same file?"
    assert candidate_spans(shutil, asked) == [Span("SameFileError", "doc:1", 236)]


def test_a_line_gives_a_count_a_sections_title_an_address_and_the_ids_asked_for() -> None:
    assert counted("How many days after notice does the GPL-3 give?") == "days"
    assert counted("How much does a plot cost?") is None  # "does" counts nothing
    assert counts("you cure the violation prior to 30 days after", "days") == ["30 days"]
    assert counts("Print the first 10 lines of each FILE", "lines") == ["10 lines"] and counts("2 bytes", "lines") == []
    assert section("What's section 7 about?") == "7" and section("Who wrote it?") is None
    assert heading("7. Disclaimer of Warranty. Unless required by applicable law", "7") == "Disclaimer of Warranty"
    assert heading("8. Litigation", "8") == "Litigation" and heading("17 apples", "1") is None
    assert addresses("You can obtain one at http://mozilla.org/MPL/2.0/.") == ["http://mozilla.org/MPL/2.0/"]
    assert references("  * zgrep: fix CVE-2022-1271 (Closes: #1009168)", "Which CVE did zgrep fix?") == [
        "CVE-2022-1271"
    ]
    assert references("  * Fix the build (Closes: #917065)", "Which bug did sed 4.7-1 close?") == ["917065"]
    assert field("Copyright (c) The Regents of the University of California.") == (
        "Copyright",
        "(c) The Regents of the University of California.",
        "",
    )
    assert names("(c) The Regents of the University of California.") == "The Regents of the University of California"


def test_the_candidates_are_the_count_the_title_or_the_address_asked_for() -> None:
    gpl = "doc:1 lines 425-426:\n425| the violation is cured\n426| and you cure the violation prior to 30 days after\n"
    assert candidate_spans(gpl, "How many days does the GPL give to cure a violation?") == [
        Span("30 days", "doc:1", 426)
    ]
    apache = (
        "doc:1 lines 140-144:\n140| patent license to make\n144| 7. Disclaimer of Warranty. Unless required by law\n"
    )
    assert candidate_spans(apache, "What's section 7 about?") == [Span("Disclaimer of Warranty", "doc:1", 144)]
    mpl = "doc:1 lines 359-360:\n359| the MPL was not distributed\n360| You can obtain one at http://mozilla.org/MPL/2.0/.\n"
    assert candidate_spans(mpl, "what's the link to the MPL?") == [Span("http://mozilla.org/MPL/2.0/", "doc:1", 360)]


def test_a_copyright_files_format_is_no_answer() -> None:
    # the `Format:` line names the file's format: the source's address is the one asked for
    apt = (
        "doc:1 lines 1-4:\n1| Format: https://www.debian.org/doc/packaging-manuals/copyright-format/1.0/\n"
        "4| Source: https://salsa.debian.org/apt-team/apt\n"
    )
    assert candidate_spans(apt, "Where is the code of Debian's package manager hosted online?") == [
        Span("https://salsa.debian.org/apt-team/apt", "doc:1", 4)
    ]


CHANGELOG = (
    "doc:1 lines 1-12:\n"
    "1| sed (4.8-1) unstable; urgency=medium\n"
    "2| \n"
    "3|   * New upstream release.\n"
    "4| \n"
    "5|  -- Clint Adams <clint@debian.org>  Sun, 19 Jan 2020 12:00:00 -0500\n"
    "6| \n"
    "7| sed (4.7-1) unstable; urgency=medium\n"
    "8| \n"
    "9|   * New upstream version.  closes: #917065.\n"
    "10| \n"
    "11|  -- Clint Adams <clint@debian.org>  Sat, 22 Dec 2018 11:35:07 -0500\n"
    "12| \n"
)


def test_a_changelog_entry_answers_for_its_header() -> None:
    assert candidate_spans(CHANGELOG, "Which bug did sed 4.7-1 close?") == [Span("917065", "doc:1", 9)]
    assert candidate_spans(CHANGELOG, "what's the date of sed 4.7-1?") == [Span("22 Dec 2018", "doc:1", 11)]
    assert candidate_spans(CHANGELOG, "Who uploaded sed 4.7-1?")[0].text == "Clint Adams"
    assert answer_kind("On what day did sed 4.7 come out?") == "date" and answer_kind("What's the date?") == "date"


def test_an_address_is_the_first_the_document_gives_and_a_field_value_has_a_word() -> None:
    apache = (
        "doc:1 lines 3-190:\n3|                         http://www.apache.org/licenses/\n"
        "190|    You may obtain a copy of the Apache License at http://www.apache.org/licenses/LICENSE-2.0\n"
    )
    spans = candidate_spans(apache, "Where on the web can the Apache licences be found?")
    assert spans == [Span("http://www.apache.org/licenses/", "doc:1", 3)]
    bash = "doc:1 lines 1-3:\n1| Upstream-Name: bash\n3| Files: *\n"
    assert candidate_spans(bash, "Which files does it cover?") == []  # `*` is no value


def test_a_modules_constant_is_meant_by_the_modules_name_and_a_section_by_its_title() -> None:
    smtplib = ["SMTP_PORT = 25", "SMTP_SSL_PORT = 465", "LMTP_PORT = 2003"]
    assert meant_names("Which port does smtplib connect to when none is given?", smtplib) == ["SMTP_PORT"]
    poplib = ["POP3_PORT = 110", "POP3_SSL_PORT = 995"]
    meant = meant_names("Which port does poplib use without SSL?", poplib)
    assert "POP3_PORT" in meant and "POP3_SSL_PORT" not in meant
    # the question as lines are ranked for it has lost the module's name: the question whole still begins it
    telnetlib = ["TELNET_PORT = 23", "    port = 0"]
    assert meant_names("What port does use by default?", telnetlib) == []
    whole = "What port does telnetlib use by default?"
    assert meant_names("What port does use by default?", telnetlib, whole=whole) == ["TELNET_PORT"]
    # of two names said whole, the one that says more of the question ("secure": SSL) is meant
    nntplib = ["NNTP_PORT = 119", "NNTP_SSL_PORT = 563"]
    assert meant_names("secure news server port in nntplib?", nntplib) == ["NNTP_SSL_PORT"]
    assert meant_names("news server port in nntplib?", nntplib) == ["NNTP_PORT"]
    mpl = "doc:1 lines 300-369:\n300| 8. Litigation\n369| Exhibit B - Incompatible With Secondary Licenses\n"
    asked = "What is the title of section 8 of the Mozilla Public License 2.0?"
    assert "not the title" in (not_the_value("Incompatible With Secondary Licenses", mpl, asked) or "")
    assert not_the_value("Litigation", mpl, asked) is None
    unseen = "doc:1 lines 369-369:\n369| Exhibit B - Incompatible With Secondary Licenses\n"
    assert "no line shown opens it" in (not_the_value("Incompatible With Secondary Licenses", unseen, asked) or "")


def test_a_count_is_read_off_a_documents_line_not_a_chats_turn() -> None:
    chat = "doc:1 lines 40-40:\n40| user: we merged 150 commits into main last week\n"
    assert candidate_spans(chat, "How many commits have been merged into main?") == []
    notes = "doc:1 lines 40-40:\n40| The release merged 150 commits into main.\n"
    assert candidate_spans(notes, "How many commits were merged?") == [Span("150 commits", "doc:1", 40)]


def test_a_who_question_no_line_about_it_answers_is_answered_by_the_first_person_the_file_names() -> None:
    hostname = (
        "doc:1 lines 1-9:\n1| This package was written by Peter Tobias <tobias@et-inf.fho-emden.de>\n"
        "2| on Thu, 16 Jan 1997 01:00:34 +0100.\n9| Copyright: 1994-1996 Peter Tobias, Bernd Eckenfels\n"
    )
    first = candidate_spans(hostname, "who made hostname?")[0]
    # a guess: its line counts as about the question only by the grounding's own ranking (git's first person named
    # with an address, Simon Hausmann, was `done` for "who owns git?" when a span's line always counted)
    assert first.text == "Peter Tobias" and first.guessed
    chat = "doc:1 lines 1-2:\n1| user: I read a novel by Stephen King\n2| assistant: Which one did you like?\n"
    assert candidate_spans(chat, "Who is my favourite cook?") == []  # a conversation's turn names no author


def test_the_first_person_is_taken_from_the_document_the_best_line_is_in() -> None:
    shown = (
        "doc:1 bash-copyright (lines 1-3):\n1| Files: *\n2| Copyright: (C) 1987-2022 Free Software Foundation, Inc.\n"
        "3| put together by Matthias Klose\n\n"
        "doc:2 bzip2-copyright (lines 1-3):\n1| Upstream-Name: bzip2\n2| Files: *\n"
        "3| Copyright: 1996-2010 Julian R Seward <jseward@bzip.org>\n"
    )
    asked = "Who holds the copyright of bzip2?"
    spans = candidate_spans(shown, asked, documents=["/t/bash-copyright", "/t/bzip2-copyright"])
    assert [span.text for span in spans] == ["Julian R Seward"]


def test_who_made_a_changelog_entrys_upload_is_its_sign_off() -> None:
    hostname = (
        "doc:1 lines 1-17:\n1| hostname (3.23+nmu1) unstable; urgency=medium\n2| \n3|   * Non-maintainer upload.\n"
        "7|  -- Bastian Germann <bage@debian.org>  Mon, 19 Dec 2022 14:33:11 +0100\n"
        "9| hostname (3.23) unstable; urgency=medium\n10|   * Increase buffer size\n"
        "11|  -- Michael Meskes <meskes@debian.org>  Thu, 07 Nov 2019 12:31:36 +0100\n"
        "13| hostname (3.22) unstable; urgency=medium\n15|   * Made the build robust against binNMUs.\n"
        "17|  -- Michael Meskes <meskes@debian.org>  Sat, 24 Aug 2019 19:05:40 +0200\n"
    )
    # "NMU" is what the entry calls a non-maintainer upload; its sign-off, not the maintainer's, names who
    assert candidate_spans(hostname, "who did the nmu for hostname?", documents=["hostname/changelog"]) == [
        Span("Bastian Germann", "doc:1", 7)
    ]
    assert candidate_spans(hostname, "Who made the build robust?", documents=["hostname/changelog"]) == [
        Span("Michael Meskes", "doc:1", 17)
    ]


def test_a_no_option_answers_only_a_question_that_asks_for_something_not_to_happen() -> None:
    grep = (
        "doc:1 lines 40-46:\n40|        -i, --ignore-case\n41|               Ignore case distinctions in patterns\n"
        "45|        --no-ignore-case\n46|               Do not ignore case distinctions.  This is the default.\n"
    )
    assert (
        candidate_spans(grep, "what's the grep flag for case insensitive?", documents=["man-grep.txt"])[0].text == "-i"
    )
    assert (
        candidate_spans(grep, "which flag stops grep ignoring case?", documents=["man-grep.txt"])[0].text
        == "--no-ignore-case"
    )


def test_a_field_of_several_alike_or_that_names_no_one_is_no_span() -> None:
    # three keys say "compression level" alike: the first, `_COMPRESS_LEVEL_FAST = 1`, was gzip's default, `done`
    gzip = (
        "doc:1 lines 20-34:\n20| _COMPRESS_LEVEL_FAST = 1\n21| _COMPRESS_LEVEL_TRADEOFF = 6\n"
        "22| _COMPRESS_LEVEL_BEST = 9\n"
        '34|     "rb", and the default compresslevel is 9.\n'
    )
    assert candidate_spans(gzip, "What compression level does gzip use by default?", documents=["gzip.py"]) == []
    assert candidate_spans(gzip, "What is _COMPRESS_LEVEL_BEST?") == [Span("9", "doc:1", 22)]
    # asked who, a field's value must name someone: not a docstring's `prompt: Written on stream ...`
    getpass = (
        "doc:1 lines 13-33:\n13| # Authors: Piers Lauder (original)\n"
        "33|       prompt: Written on stream to ask for the input.  Default: 'Password: '\n"
    )
    spans = candidate_spans(getpass, "who first wrote python's password prompt module?", documents=["getpass.py"])
    assert not any("Written" in span.text for span in spans)
    # nor only the package asked of (`Upstream-Name: XZ Utils` for who maintains xz)
    xz = "doc:1 lines 1-4:\n2| Upstream-Name: XZ Utils\n3| Upstream-Contact:\n4|  Lasse Collin <lasse@tukaani.org>\n"
    spans = candidate_spans(xz, "who maintains xz upstream?", documents=["/usr/share/doc/xz-utils/copyright"])
    assert "XZ Utils" not in [span.text for span in spans]


def test_the_option_named_for_what_is_asked_answers_among_lines_alike() -> None:
    # cut's manual (`man -P cat cut`): `-s, --only-delimited` ranked first and was `done`
    manual = [
        "       -d, --delimiter=DELIM",
        "              use DELIM instead of TAB for field delimiter",
        "",
        "       -f, --fields=LIST",
        "              select only these fields;  also print any line that contains  no",
        "              delimiter character, unless the -s option is specified",
        "",
        "       -s, --only-delimited",
        "              do not print lines not containing delimiters",
    ]
    shown = "doc:1 lines 23-37:\n" + "\n".join(
        f"{n}| {line}" for n, line in zip([23, 24, 25, 26, 27, 28, 29, 35, 36], manual, strict=True)
    )
    spans = candidate_spans(shown, "Which cut option sets the delimiter?", documents=["man-cut.txt"])
    assert spans[0] == Span("-d", "doc:1", 23)


def test_an_option_is_found_by_its_block_and_its_argument_may_be_in_brackets() -> None:
    assert options("       -f, --follow[={name|descriptor}]") == ["-f", "--follow"]
    assert options("       -n, --lines=[+]NUM") == ["-n", "--lines"]
    # du's manual: the description under the option says what the question does
    du = (
        "doc:1 lines 50-58:\n50|        -h, --human-readable\n"
        "51|               print sizes in human readable format (e.g., 1K 234M 2G)\n"
        "53|        --inodes\n54|               list inode usage information instead of block usage\n"
    )
    spans = candidate_spans(du, "Which du option shows sizes like 1K 234M 2G?", documents=["man-du.txt"])
    assert spans[0] == Span("-h", "doc:1", 50) and not spans[0].guessed
    # a block that says under half of the question's words is a guess (tail's `-z` "... watch a log file", done)
    asked = "Which du flag watches a mount for new inodes and disk usage?"
    spans = candidate_spans(du, asked, documents=["man-du.txt"])
    assert spans[0].text == "--inodes" and spans[0].guessed
    # asked how to do something, no option is read off (on the phrasing set, four of five were wrong, `done`)
    assert candidate_spans(du, "how do I get du to show sizes like 1K 234M 2G?", documents=["man-du.txt"]) == []
    # asked for something not to happen, the option whose block says not to (cp's `-i` was `done`)
    cp = (
        "doc:1 lines 80-86:\n80|        -i, --interactive\n81|               prompt before overwrite\n"
        "85|        -n, --no-clobber\n86|               do not overwrite an existing file\n"
    )
    assert candidate_spans(cp, "what flag stops cp overwriting?", documents=["man-cp.txt"])[0].text == "-n"


def test_a_field_computed_from_a_name_is_no_span() -> None:
    # wsgiref's simple_server: `server_version = "WSGIServer/" + __version__` was its version, `done`
    shown = 'doc:1 lines 19-64:\n19| __version__ = "0.2"\n64|     server_version = "WSGIServer/" + __version__\n'
    spans = candidate_spans(shown, "What version is wsgiref's simple_server?", documents=["simple_server.py"])
    assert '"WSGIServer/" + __version__' not in [span.text for span in spans]
    xmlrpc = "doc:1 lines 157-159:\n157| # xmlrpc integer limits\n158| MAXINT =  2**31-1\n"
    assert candidate_spans(xmlrpc, "What is MAXINT in xmlrpc.client?") == [Span("2**31-1", "doc:1", 158)]
