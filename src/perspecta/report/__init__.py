"""``perspecta report``: the papers' analyses of scored results as an offline HTML report.

Records are streamed once into per-group counters (:mod:`.aggregate`), never held as
objects, so memory does not grow with the number of records beyond an 8-byte key hash
per line (used to let a later record of the same model/mode/repeat/item win, as
``perspecta score`` does). Sections (:mod:`.sections`) turn the counters into tables
and matplotlib figures; :mod:`.build` writes ``index.html``, ``report.md``, ``tables/``,
``figures/`` and ``examples/``.
"""
