"""Crawlers that collect raw text (Mastodon posts, news feeds) for corpus building."""
