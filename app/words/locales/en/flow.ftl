# A class in full flow and the first 30 seconds (issue 34): the home page's lessons and how a class
# starts (templates/_home_ways.html), the real model explained.

## The home page's ways in

# A lesson's length: its stops at the lesson player's default pace (30 s a stop).
flow-lesson-length = { $stops } { $stops ->
        [one] stop
       *[other] stops
    } · about { $minutes } min
flow-way-class = <strong>Teach a class:</strong> open a lesson, then press <em>Present to class</em>; students join with the code it shows. Their phones and laptops reach this server when it was started with <code>xt serve --host 0.0.0.0</code>.
flow-way-trained-no-update = The model this server was started with, on its example text: every op of the forward, loss and backward, each gradient checked
flow-way-real-fetch = <strong>Real model:</strong> { $model }, a trained language model people use (not a small demo), is not on this machine yet. Whoever runs xt fetches it once ({ $size_mb } MB) with <code>{ $command }</code>, then reloads this page.
