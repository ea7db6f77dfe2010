"""Crawl public German Mastodon posts about LGBTQ+ topics for the mitigation corpus.

Modules, one concept each: `settings` (what to crawl), `client` (Mastodon.py
client with bounded, reset-aware retries), `probe` (what an instance allows),
`cleaning` (post HTML to corpus text), `filters` (why a post is dropped),
`store` (posts.jsonl, state.json, stats.json; crash-safe resume), `crawler`
(threads, paging, cursors) and `cli` (`queerbias crawl mastodon`).
"""
