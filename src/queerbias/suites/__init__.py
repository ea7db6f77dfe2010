"""Further evaluation suites beyond WinoQueer pairs."""
