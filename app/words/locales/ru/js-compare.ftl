# Скрипт страницы: «Сравнить с…» под шагом (static/js/walk/compare.js).

js-compare-no-text = эта трасса задана номерами токенов: для другого текста нужен текст
js-compare-type-text = введите другой текст (столько же токенов, сколько в этом)
js-compare-no-update = в этой трассе нет шага обновления: начните со спецификации с оптимизатором
js-compare-give-n = укажите N — сколько шагов обучения B делает сначала
js-compare-identical = { $label } для { $name }: в A и B совпадает
js-compare-difference = { $label } для { $name } ({ $dtypeA } | { $dtypeB }): ‖B − A‖₂/‖A‖₂ = { $rel }, max |B − A| = { $maxAbs } ({ $maxRel } от max |A|)
js-compare-optimizer = { $name }, скорость обучения { $lr }
js-compare-no-optimizer = без оптимизатора
js-compare-side = { $name }: { $dtype }, { $optimizer }, шагов обучения до этого: { $steps }, потери { $loss }
js-compare-running = строится B и выполняется сравнение…
js-compare-with = сравнить с
js-compare-float32 = float32 (эта трасса — float64)
js-compare-float64 = float64 (эта трасса — float32)
js-compare-steps = после N шагов обучения
js-compare-other-optimizer = другой оптимизатор (SGD ↔ AdamW)
js-compare-other-text = другой текст
js-compare-value = N или другой текст
js-compare-start = Сравнить
js-compare-stop = Прекратить сравнение
js-compare-section = сравнение с другой трассой
js-compare-heading = Сравнить с…
