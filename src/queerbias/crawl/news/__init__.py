"""News crawler: RSS/Atom feeds, article pages extracted to text, keyword-filtered documents."""
