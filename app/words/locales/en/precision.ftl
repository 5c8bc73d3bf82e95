# A low-precision step's spec fields (app/spec/precision.py)
error-precision-low-only = { $field } applies to a bfloat16 or float16 step; this one is { $dtype }
error-precision-loss-scale = loss_scale must be a power of two from 1 to 2^{ $most }, got { $value }
error-precision-not-low = trace { $trace } is a { $dtype } step: the numbers' health compares a bfloat16 or float16 step with its float64 twin (POST its spec with "dtype": "bfloat16" or "float16")
