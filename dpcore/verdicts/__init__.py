"""Which public text sanitizers keep their claims: the verdict table.

- :mod:`dpcore.verdicts.rows` — the rows: controls, dpcore, pyPANTERA, mldp-text;
- :mod:`dpcore.verdicts.fit` — each fitted row's |V| and budget, for power within its minutes;
- :mod:`dpcore.verdicts.run` — one row's audit and its compact record; rows locally or on Ray;
- :mod:`dpcore.verdicts.document` — the file's schema, validation, resuming, the check's sample;
- :mod:`dpcore.verdicts.check` — ``verdicts --check``;
- :mod:`dpcore.verdicts.wording` — a row in plain words;
- :mod:`dpcore.verdicts.markdown` — the table as Markdown;
- :mod:`dpcore.verdicts.docs_table` — that table inside docs/verdicts.md
  (``python -m dpcore.verdicts.docs_table`` rewrites it from the shipped file).

``python -m dpcore verdicts`` runs it; the dashboard's "Do public sanitizers keep their claims?"
page reads the shipped file, ``dpcore/data/verdicts.json``.
"""
