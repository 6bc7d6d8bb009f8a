"""What the two mutation campaigns share (scripts/mutation/mutate_numpy.py, scripts/mutation/mutate_reference.py):
the kinds of reason a mutant cannot be killed, and docs/mutation.md, whose title and whose
own sections each campaign rewrites, keeping the other's as they are. Neither campaign imports
the other."""

import os

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
DOC = os.path.join(ROOT, "docs", "mutation.md")

# Why a listed mutant cannot be killed, the first word of its reason in an equivalents file.
KINDS = {
    "Equivalent": "the program computes the same thing for every input a case can send",
    "Implementation-defined": "it changes only a result the suite marks implementation-defined, which binds the reference alone",
    "Out of reach": "killing it needs a case too large to keep in the suite",
}


def md_cell(text):
    return text.replace("|", "\\|").replace("\n", " ")


def header_lines():
    """The title and introduction of docs/mutation.md, above its sections."""
    return [
        "# Mutation testing",
        "",
        "How many wrong implementations get past the suite. Generated from the campaigns' last",
        "verdicts by `python3 scripts/mutation/mutate_numpy.py report` (the numpy backend's sections) and",
        "`python3 scripts/mutation/mutate_reference.py report` (the reference's section); do not edit.",
        "Each campaign is rerun by `python3 scripts/mutation/mutate_numpy.py run` and",
        "`python3 scripts/mutation/mutate_reference.py run` (the reference's section says how).",
        "",
    ]


def split_sections(text):
    """The page's text before its first `## ` heading, and its sections in order as
    (heading, text) pairs, each text from its heading line to just before the next."""
    parts = ("\n" + text).split("\n## ")
    head = parts[0][1:]
    sections = []
    for part in parts[1:]:
        heading = part.split("\n", 1)[0]
        sections.append((heading, "## " + part.rstrip("\n") + "\n"))
    return head, sections


def replace_sections(new_sections, order, doc=DOC):
    """Rewrites docs/mutation.md's title and introduction and the sections named in
    `new_sections` (heading -> lines, the `## heading` line first), keeping every other section
    as it is. Sections are laid out in `order` (headings), any others after them."""
    text = ""
    if os.path.exists(doc):
        with open(doc) as f:
            text = f.read()
    _, sections = split_sections(text)
    by_heading = dict(sections)
    for heading, lines in new_sections.items():
        by_heading[heading] = "\n".join(lines).rstrip("\n") + "\n"
    headings = [h for h in order if h in by_heading]
    headings += [h for h, _ in sections if h not in headings]
    headings += [h for h in by_heading if h not in headings]
    with open(doc, "w") as f:
        f.write("\n".join(header_lines()) + "\n" + "\n".join(by_heading[h] for h in headings))


# The order of docs/mutation.md's sections.
ORDER = ["The numpy backend", "The reference", "CI"]
