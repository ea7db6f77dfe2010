"""Corpus building: the common document schema, the taz archive reader, deduplication, the builder
that turns crawled and archived texts into train/validation splits, and the takedown (`forget`)."""
