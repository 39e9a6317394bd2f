"""The models dpcore runs, and their devices: one home below the mechanisms, the attacks and the audits.

- :mod:`dpcore.models.masked_lm`: the masked LM (the shipped MiniLM attacker, ONNX or torch, or a
  user's folder), :func:`~dpcore.models.masked_lm.masked_position_logits`; DP-MLM samples from it
  and the mask-token attack predicts with it;
- :mod:`dpcore.models.minilm`: the MiniLM sentence encoder and its bert-base-uncased vocabulary;
- :mod:`dpcore.models.causal_lm`: SmolLM2-135M-Instruct, the causal LM behind DP-Prompt;
- :mod:`dpcore.models.onnx_session`: ONNX Runtime sessions with dpcore's thread settings;
- :mod:`dpcore.models.folder`: a user's model folder checked before anything in it is loaded;
- :mod:`dpcore.models.devices`: ``cpu``, ``cuda``, ``cuda:N``, ``auto``.

No mechanism imports the attack room (:mod:`dpcore.attack`) for a model;
``tests/test_import_graph.py`` fences it. Every ``from_pretrained`` passes
``local_files_only=True`` (``tests/test_architecture.py``). Nothing here is imported by this
package's ``__init__``: a page that needs no model loads none.
"""
