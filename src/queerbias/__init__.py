"""queerbias: measure and mitigate anti-LGBTQ+ bias in German and multilingual LMs."""

__version__ = "0.1.0"
