"""Text utilities shared by the crawlers: keyword matching, language checks, HTML to text, scrubbing
personal data."""
