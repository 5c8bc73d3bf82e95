# The frame of every page (templates/base.html): skip link, header, the language switch.

# The language's own name, as its switch link shows it on every other language's pages.
language-name = English
frame-skip-link = Skip to content
frame-tagline = one training step of a small transformer, op by op
frame-language-switch = Language
frame-type-size = A+ Large type
    .title = Larger text and figures for a projector
