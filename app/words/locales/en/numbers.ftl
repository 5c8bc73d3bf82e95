# How numbers read in this language (app/words/numbers.py on the server, static/js/lib/numbers.js
# in the page, which both read these two messages): the mark before a number's decimals ("0.5"),
# and the mark between groups of three digits in a large count ("1,234,567"). A space is written
# as a string literal, { "\u00A0" } for a no-break space, since Fluent trims a message's blanks.
number-decimal-separator = .
number-group-separator = ,
