# A class in full flow and the first 30 seconds (issue 34): the home page's lessons and how a class
# starts (templates/_home_ways.html), the real model explained.

## The home page's ways in

# A lesson's length: its stops at the lesson player's default pace (30 s a stop).
flow-lesson-length = { $stops } { $stops ->
        [one] stop
       *[other] stops
    } · about { $minutes } min
flow-way-class = <strong>Teach a class:</strong> open a lesson, press <em>Present to class</em>; students type its code. Serve with <code>xt serve --host 0.0.0.0</code> so their devices reach it.
flow-way-trained-no-update = The model this server was started with, on its example text: every op of the forward, loss and backward, each gradient checked
flow-way-real-fetch = <strong>Real model:</strong> <a href="#{ $anchor }">how to fetch it</a>
    .title = { $model } is not on this machine yet: a trained language model people use, not a small demo; fetching it is one command, run by whoever runs xt

## The quiz (static/js/walk/buglab.js)

# Under a probed backward step whose check fails.
flow-probe-from-above = ✗ says this step's gradient is wrong, not that its op is the broken one: the backward pass runs from the loss down, so a wrong gradient from the broken step above reaches every step after it. The first step that fails is the suspect; "Compare with the correct backward" tells whether this op itself is wrong.
