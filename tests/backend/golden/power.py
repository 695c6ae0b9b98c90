# D[power]: the primal result and what its backpropagator reads
def power_chad(x, n):
    power_1, power_1_saved = (None, None)  # set on one path only
    # line 62: if n == 0:
    cond = n == 0
    if cond:  # D[case]
        result = 1.0
    else:
        # line 64: return x * power(x, n - 1)
        sub = n - 1
        power_1, power_1_saved = power_chad(x, sub)
        mul = x * power_1
        result = mul
    return (result, (cond, power_1, x, power_1_saved))


# run: the backpropagator of power, cotangents of its parameters (slots x=0)
def power_bp(saved, d):
    cond, power_1, x, power_1_saved = saved  # the values of the forward pass it reads
    dx = 0.0  # parameter x
    # line 62: if n == 0:
    if not cond:  # the branch taken forward
        # line 64: return x * power(x, n - 1)
        dx += d * power_1
        dpower_1 = d * x
        dx_part, _ = power_bp(power_1_saved, dpower_1)
        dx += dx_part
    return (dx, None)
