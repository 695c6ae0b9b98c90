# D[power]: the primal result and its backpropagator
def power_chad(x, n):
    # line 62: if n == 0:
    cond = n == 0
    if cond:  # D[case]
        result = 1.0
    else:
        # line 64: return x * power(x, n - 1)
        sub = n - 1
        power_1, power_1_pullback = power_chad(x, sub)
        mul = x * power_1
        result = mul
    # run: the backpropagator of power, cotangents of its parameters (slots x=0)
    def power_bp(d):
        dx = 0.0  # parameter x
        # line 62: if n == 0:
        if not cond:  # the branch taken forward
            # line 64: return x * power(x, n - 1)
            dx += d * power_1
            dpower_1 = d * x
            dx_part, _ = power_1_pullback(dpower_1)
            dx += dx_part
        return (dx, None)
    return (result, power_bp)
