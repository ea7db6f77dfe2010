"""GRUFF: German pronoun fidelity (Mewes, Lauscher & Gautam 2026) as a before/after suite.

Given a person introduced with a pronoun (er, sie, en, xier) and 0-5 sentences about
someone else, does a model reuse the right pronoun? Modules: templates (reading the
upstream TSVs), forms (German articles, nouns, pronouns), generation (instances and
balanced samples), scoring (forced choice), metrics, report/plots, compare, api.
"""

from queerbias.suites.gruff.api import run_gruff

__all__ = ["run_gruff"]
