# The page's script: the API client, the static export's answers, the figures' helpers
# (static/js/lib/*.js).

js-api-status = the server answered { $status }
js-api-unreachable = cannot reach the server ({ $error })
js-api-not-json = the server's answer was not JSON
js-queue-waiting = Waiting for the server: { $ahead ->
        [one] 1 trace
       *[other] { $ahead } traces
    } ahead of this one (about { $wait } s)…
js-queue-next = Next in the server's queue (about { $wait } s)…
js-export-no-server = a static export has no server for { $what }: the full app computes it: `make run` (or `xt serve`) in a checkout of xt
js-export-not-here = this view is not in this export ({ $key }); the full app computes it: `make run` (or `xt serve`) in a checkout of xt
js-export-no-crypto = the sealed quiz opens with the browser's Web Crypto, which works only on https://, http://localhost or file:// (a secure context)
js-export-sealed-missing-probe = this export holds no probe of step { $step }
js-export-sealed-missing-answer = this export holds no answer of step { $step }
js-export-probes-spent = all { $max } of your probes of this quiz are spent (steps { $used }); answer it
js-export-quiz-no = a static quiz answers no { $key }
js-stats-shape = shape
js-stats-min = min
js-stats-max = max
js-stats-mean = mean
js-stats-std = std
js-stats-label = the whole tensor's numbers
js-download-table = Download the numbers (.json)
    .title = The numbers table of this figure: its rows, columns and values
js-download-every = Download every value:
js-bench-every-value = Every value (pages, jump, CSV)
js-scale-linear = linear
js-scale-symmetric = symmetric about 0
js-scale-row = per-row normalized
js-scale-row-title = { $value } / row max|{ $value }|
js-scale-drawn = drawn
js-scale-label = colour scale
js-scale-control = Colour scale
js-figure-numbers-of = { $caption }: numbers
js-figure-numbers = Numbers
js-figure-enlarge = Enlarge:
# An error size that was not measured (a table cell, a comparison)
js-error-size-missing = n/a
