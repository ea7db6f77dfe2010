"""Crawl public German Mastodon posts about LGBTQ+ topics for the mitigation corpus, as the fediverse
and the GDPR expect: keyed pseudonyms only, every opt-out honoured, deletions followed, takedowns possible.

Modules, one concept each: `settings` (what to crawl), `transport` (counted, capped,
address-checked HTTP session), `client` (Mastodon.py client with bounded, reset- and
Retry-After-aware retries), `probe` (what an instance allows), `etiquette` (deny-list,
robots.txt and rules verdicts), `cleaning` (post HTML to corpus text), `filters` (why a
post is dropped), `records` (corpus record and sealed re-identification data), `store`
(the private, locked output folder; crash-safe resume), `tombstones` (the sealed list of
removed posts and authors), `crawler` (threads, paging, cursors), `refresh` (re-checking stored posts) and `cli`
(`queerbias crawl mastodon`).
"""
