"""Media: uploads into the media store and signed, expiring URLs served by toolhost."""
