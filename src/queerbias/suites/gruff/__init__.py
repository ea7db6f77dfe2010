"""GRUFF: German pronoun fidelity (Mewes, Lauscher & Gautam 2026) as a before/after suite.

Given a person introduced with a pronoun (er, sie, en, xier) and 0-5 sentences about
someone else, does a model reuse the right pronoun? Modules: templates (reading the
upstream TSVs), forms (German articles, nouns, pronouns), generation (instances and
balanced samples), scoring (forced choice), metrics, report (tables and figure data)
and suite (the `Suite` that `queerbias run gruff` and training use).
"""
