"""The words: the identity taxonomy every pair set and lexicon names groups in, and what the crawlers share
(keyword matching, language checks, HTML to text, scrubbing personal data)."""
