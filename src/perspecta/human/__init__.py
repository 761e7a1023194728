"""Human evaluation: a local web app that shows benchmark items to people and records
their answers (``perspecta human serve``), and the summary of those answers as human
accuracy, response times and scored records (``perspecta human results``).

Modules: ``plan`` (which items each annotator sees, in which order), ``store``
(durable SQLite response log), ``present`` (an item as a person needs to see it),
``app`` (the Starlette app), ``results`` (statistics and ``results.jsonl``).
"""
