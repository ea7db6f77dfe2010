"""Corpus building: the taz archive reader, deduplication, the builder that turns crawled and archived
documents (`crawl.documents`) into train/validation splits, and the takedown (`forget`)."""
