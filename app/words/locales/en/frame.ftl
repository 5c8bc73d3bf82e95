# The frame of every page (templates/base.html): skip link, header, the language switch.

# The language's own name, as its switch link shows it on every other language's pages.
language-name = English
frame-skip-link = Skip to content
frame-tagline = one training step of a small transformer, op by op
frame-language-switch = Language
frame-type-size = A+ Large type
    .title = Larger text and figures for a projector

## The join page (templates/join.html)

join-title = Join a class
join-lede = Type the code your teacher shows: your screen then follows theirs, step by step.
join-cannot = <strong>Cannot join:</strong> { $error }
join-code = Class code
