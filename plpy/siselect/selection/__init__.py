"""Stage 4 of the pipeline: judging and choosing (paper section III).

``tournament`` groups the candidates by their answers on D and plays the duels; a judge
(``judges``: reference, none, or ``llm`` with its ``prompts`` and ``llm_settings``) answers
the question on each D' (``verdict`` holds what it is given and says); ``report`` renders a
tournament as Markdown.
"""
