# A low-precision step's spec fields (app/spec/precision.py)
error-precision-low-only = { $field } задаётся только для шага в bfloat16 или float16, а этот шаг в { $dtype }
error-precision-loss-scale = loss_scale должен быть степенью двойки от 1 до 2^{ $most }, а получено { $value }
error-precision-not-low = трасса { $trace } — шаг в { $dtype }: здоровье чисел сравнивает шаг в bfloat16 или float16 с его двойником во float64 (отправьте её спецификацию с "dtype": "bfloat16" или "float16")

# The update step of a low-precision training step the dynamic loss scaler skipped (app/steps/update.py)
precision-update-skipped = Обновление на этом шаге пропущено: градиент переполнил { $dtype } при масштабе функции потерь 2^{ $exponent }, поэтому динамический масштабировщик оставляет веса и состояние оптимизатора прежними (ΔW = 0) и уменьшает масштаб вдвое, до 2^{ $next }, для следующего шага.

# The gradient check of a bfloat16 or float16 step (static/js/walk/gradcheck_view.js)
js-precision-check-roundoff = Эта трасса в { $dtype } (мастер-веса во float32, каждая операция округляется, как сказано в таблице точности): проверка выполняется на том же шаге, вычисленном в float64 (те же веса, токены и ошибки). Градиент { $dtype } на экране отличается от него на { $roundoff } (ошибка округления формата, а не неверный градиент).
js-precision-check-overflowed = Эта трасса в { $dtype }, и её значения на этом шаге переполнились до inf или NaN. Тот же шаг, вычисленный в float64 (те же веса, токены и ошибки), проверку проходит: правило обратного прохода верно, неверны числа { $dtype } на экране (слишком большой масштаб функции потерь или значения за пределами диапазона формата).
js-precision-check-badge-broken = проверка { $what } { $verdict } макс. отн. ошибка { $error } (допуск { $tolerance }) · значения { $dtype } здесь — NaN/inf

# The walk page of a bfloat16 or float16 step: each step's panel and the timeline's marks (static/js/walk/precision.js)
# $x and $y in the hover are Plotly's placeholders ("%{x}"): keep them as they are.
js-precision-heading = Числа в { $dtype }
js-precision-loading = Сравниваем числа с двойником во float64…
js-precision-failed = Не удалось получить состояние чисел: { $error }
js-precision-op-rounded = { $kind } выполняется с округлением: входы округляются до { $dtype }, вычисление идёт во float32 (суммы матричного умножения тоже), выход округляется один раз. В обратном проходе операция читает dL/d выхода в { $dtype } и каждый градиент, который она вычисляет (по активации, по весу), округляет до { $dtype } один раз.
js-precision-op-float32 = { $kind } — редукция и выполняется во float32: читает входы как есть и возвращает float32. В обратном проходе остаётся во float32, кроме градиента по входу в { $dtype }: он округляется до { $dtype }.
js-precision-op-update = Обновление применяется к мастер-весам во float32: ΔW, вычисленное по градиентам во float32 после снятия масштаба, прибавляется к ним во float32. Веса, хранимые в { $dtype }, потеряли бы долю, показанную ниже.
js-precision-table = Тензор этого шага и его градиент в сравнении с двойником во float64
js-precision-col-tensor = Тензор
js-precision-col-held = Хранится в
js-precision-col-error = Отн. ошибка к float64
js-precision-col-flushed = Обнулено
js-precision-col-subnormal = Субнормальные
js-precision-col-overflowed = Переполнено
js-precision-col-verdict = Теряет информацию
js-precision-loses = да
js-precision-keeps = нет
js-precision-rule = Отмеченные на шкале шаги теряют информацию в { $dtype }: относительная ошибка к двойнику во float64 больше { $roundoffs } единиц округления формата ({ $limit }), больше { $flushed } % элементов обнулено там, где у двойника они не нули, или хотя бы один элемент переполнен.
js-precision-first = Первым её теряет { $label }.
js-precision-first-none = По этому правилу ни один шаг этой трассы не теряет информацию в { $dtype }.
js-precision-cell = { $label } · теряет информацию в { $dtype }
js-precision-histogram-title = Порядки { $name } (хранится в { $dtype }) рядом с диапазонами форматов
js-precision-histogram-note = Элементы по ⌊log₂|x|⌋ (нули и inf не учтены): зелёные — в нормальном диапазоне { $dtype }, жёлтые — ниже него (субнормальные или обнулённые), красные — больше его наибольшего числа. Полосы сверху — диапазоны форматов: светлая часть — субнормальные числа, тёмная — нормальные.
js-precision-histogram-hover = 2^{ $x }: элементов — { $y }
js-precision-histogram-scaled = Градиент учтён так, как его хранит масштабированный обратный проход: S·g, S = { $scale } (доля обнулённых и ошибка от этого не меняются).
js-precision-axis-exponent = порядок ⌊log₂|x|⌋
js-precision-axis-count = элементов
js-precision-range = { $dtype }: 2^{ $subnormal } … 2^{ $normal } … 2^{ $largest }
js-precision-update-title = Доля обновления каждого параметра, теряемая весами в { $dtype }
js-precision-update-note = ‖потерянной части ΔW‖ / ‖ΔW‖, если бы ΔW прибавлялось к весам, хранимым в { $dtype }: элемент меньше половины шага сетки формата у его веса пропадает. Мастер-веса во float32 сохраняют его целиком.
js-precision-update-axis = доля ‖ΔW‖, которая теряется
js-precision-update-text = Если прибавить это обновление к весам в { $dtype }, а не к мастер-весам во float32, оно потеряет до { $lost } своей нормы ({ $param }): поэтому оптимизатор хранит копию весов во float32.
js-precision-compare-other = тот же шаг в { $dtype }
js-precision-compare-float32 = тот же шаг во float32 (без округления)

# The home form's loss-scale fields (templates/_precision_fields.html, static/js/home/precision.js)
home-precision-scaling = Масштабирование функции потерь (bfloat16, float16)
home-precision-loss-scale = Масштаб S
home-precision-loss-scale-help = Степень двойки от 1 до 2^32: обратный проход идёт по S·L. Пусто: 1, без масштабирования.
home-precision-growth = Интервал роста
home-precision-growth-help = Динамический масштаб: удвоить S после стольких шагов без переполнения (1–100 000), при inf/NaN уменьшить вдвое и пропустить обновление. Пусто: постоянный S.
home-precision-flush = Обнулять субнормальные числа

# A lesson's claims about a low-precision step (app/lessons/claims.py: precision, first_losing)
lesson-claim-precision-rel_error = относительная ошибка { $name } по сравнению с двойником во float64 — { $condition }
lesson-claim-precision-flushed = доля обнулённых элементов { $name } — { $condition }
lesson-claim-precision-subnormal = доля элементов { $name }, хранимых субнормальными числами, — { $condition }
lesson-claim-precision-overflowed = доля элементов { $name }, переполненных до inf, — { $condition }
lesson-claim-first-losing-value = первым на шаге информацию теряет тензор { $name }
lesson-claim-first-losing-grad = первым на шаге информацию теряет градиент dL/d{ $name }
lesson-claim-first-losing-none = ни один тензор шага не теряет информацию
lesson-measured-first-losing-value = первым теряет { $name }
lesson-measured-first-losing-grad = первым теряет dL/d{ $name }
lesson-measured-first-losing-none = ни один не теряет
lesson-against-precision = спецификация этой трассы в { $dtype } с масштабом функции потерь { $scale }
lesson-against-loss-scale = спецификация этой трассы с масштабом функции потерь { $scale }
error-precision-quiz = здоровье чисел квиза не показывается: место, где градиент переполняется или обнуляется, может указать на ошибку
