# D[sorted_squares]: the primal result and what its backpropagator reads
def sorted_squares_chad(xs):
    # line 68: return sum([v * v for v in sorted(xs)])
    empty = []
    empty_1 = []
    places = positions(xs)
    listcomp_1 = empty_1
    tape = []  # one record per iteration
    for k in places:  # D[loop]: forward iterations
        x = xs[k]
        item = x
        listcomp_1_1 = append(listcomp_1, item)
        saved = len(listcomp_1_1) - 1  # kept for D[append]
        tape.append(saved)
        listcomp_1 = listcomp_1_1
    listcomp_1_2 = listcomp_1
    order = argsort(listcomp_1_2, False)
    empty_2 = []
    places_1 = positions(order)
    listcomp_2 = empty_2
    tape_1 = []  # one record per iteration
    for k_1 in places_1:  # D[loop]: forward iterations
        x_1 = order[k_1]
        i = x_1
        item_1 = listcomp_1_2[i]
        position = i % len(listcomp_1_2)
        listcomp_2_1 = append(listcomp_2, item_1)
        saved_1 = len(listcomp_2_1) - 1  # kept for D[append]
        tape_1.append((position, saved_1))
        listcomp_2 = listcomp_2_1
    listcomp_2_2 = listcomp_2
    places_2 = positions(listcomp_2_2)
    listcomp = empty
    tape_2 = []  # one record per iteration
    for k_2 in places_2:  # D[loop]: forward iterations
        x_2 = listcomp_2_2[k_2]
        v = x_2
        mul = v * v
        listcomp_3 = append(listcomp, mul)
        saved_2 = len(listcomp_3) - 1  # kept for D[append]
        tape_2.append((v, saved_2))
        listcomp = listcomp_3
    listcomp_4 = listcomp
    total = sum(listcomp_4)
    saved_3 = len(listcomp_4)  # kept for D[sum]
    return (total, (listcomp_4, saved_3, tape_2, places_2, tape_1, tape, places))


# run: the backpropagator of sorted_squares, cotangents of its parameters (slots xs=0)
def sorted_squares_bp(saved_4, d):
    # the values of the forward pass it reads
    listcomp_4, saved_3, tape_2, places_2, tape_1, tape, places = saved_4
    dxs = Zero  # parameter xs
    dlistcomp_1_2 = Zero  # scope listcomp_1_2
    dlistcomp_2_2 = Zero  # scope listcomp_2_2
    # line 68: return sum([v * v for v in sorted(xs)])
    dlistcomp_4 = sum_seq_ct(d, listcomp_4, saved_3)
    dlistcomp_carry = dlistcomp_4  # cotangent of the final listcomp
    dlistcomp_2_2_at, dlistcomp_2_2_values = ([], [])  # the loop's additions to dlistcomp_2_2, collected
    # the iterations, newest first
    for k_2, (v, saved_2) in zip(reversed(places_2[:len(tape_2)]), reversed(tape_2)):
        dlistcomp_3 = dlistcomp_carry
        dlistcomp, dmul = append_ct(dlistcomp_3, saved_2)
        dv = dmul * v * 2.0
        dlistcomp_2_2_at.append(k_2)
        dlistcomp_2_2_values.append(dv)
        dlistcomp_carry = dlistcomp
    dlistcomp_2_2 = add_items(dlistcomp_2_2, dlistcomp_2_2_at, dlistcomp_2_2_values)
    dlistcomp_2_carry = dlistcomp_2_2  # cotangent of the final listcomp_2
    dlistcomp_1_2_at, dlistcomp_1_2_values = ([], [])  # the loop's additions to dlistcomp_1_2, collected
    for position, saved_1 in reversed(tape_1):  # the iterations, newest first
        dlistcomp_2_1 = dlistcomp_2_carry
        dlistcomp_2, ditem_1 = append_ct(dlistcomp_2_1, saved_1)
        dlistcomp_1_2_at.append(position)
        dlistcomp_1_2_values.append(ditem_1)
        dlistcomp_2_carry = dlistcomp_2
    dlistcomp_1_2 = add_items(dlistcomp_1_2, dlistcomp_1_2_at, dlistcomp_1_2_values)
    dlistcomp_1_carry = dlistcomp_1_2  # cotangent of the final listcomp_1
    dxs_at, dxs_values = ([], [])  # the loop's additions to dxs, collected
    for k, saved in zip(reversed(places[:len(tape)]), reversed(tape)):  # the iterations, newest first
        dlistcomp_1_1 = dlistcomp_1_carry
        dlistcomp_1, ditem = append_ct(dlistcomp_1_1, saved)
        dxs_at.append(k)
        dxs_values.append(ditem)
        dlistcomp_1_carry = dlistcomp_1
    dxs = add_items(dxs, dxs_at, dxs_values)
    return (dxs,)
