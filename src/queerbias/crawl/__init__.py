"""Crawlers that collect raw text (Mastodon posts, news feeds) for corpus building, and what they share:
the document schema every source writes (`documents`), the crawl key (`keys`), the User-Agent with a
contact (`agent`), no internal addresses (`addresses`), `Retry-After` (`backoff`), private locked output
folders (`folder`), file arguments (`inputs`) and how much of a hostile answer a message repeats
(`quoting`)."""
