// matmul_collapsed_in_c
@group(0) @binding(0) var<storage, read> p0: array<f32>; // a
@group(0) @binding(1) var<storage, read> p1: array<f32>; // b
@group(0) @binding(2) var<storage, read_write> p2: array<f32>; // c
struct Params {
    p3: u64,
    b0: u32,
    n0: u32,
    b1: u32,
    n1: u32,
    b2: u32,
    n2: u32,
    acc_groups: u32,
}
@group(0) @binding(3) var<storage, read> params: Params;
@group(0) @binding(4) var<storage, read_write> acc_status: array<atomic<u32>, 5>;
var<workgroup> acc_wa_0_11: array<f32, 256>;
var<workgroup> acc_wa_0_17: array<f32, 512>;
var<workgroup> acc_wa_0_20: array<f32, 512>;
fn acc_trips32(n: u64) -> u32 {
    if (u32(n >> 32u) != 0u) { atomicCompareExchangeWeak(&acc_status[0], 0u, 3u); return 0u; }
    return u32(n);
}
fn acc_chunks_of(n: u64) -> u32 {
    let c = (n >> 31u) + select(0lu, 1lu, (u32(n) & 2147483647u) != 0u);
    return acc_trips32(c);
}
fn acc_in_bounds(param: u32, i: u64, len: u32) -> bool {
    if (u32(i >> 32u) == 0u && u32(i) < len) { return true; }
    if (atomicCompareExchangeWeak(&acc_status[0], 0u, 1u).exchanged) {
        atomicStore(&acc_status[1], param);
        atomicStore(&acc_status[2], u32(i));
        atomicStore(&acc_status[3], len);
        atomicStore(&acc_status[4], u32(i >> 32u));
    }
    return false;
}
@compute @workgroup_size(256)
fn matmul_collapsed_in_c_gpu(@builtin(global_invocation_id) acc_gid: vec3<u32>, @builtin(local_invocation_index) acc_lid: u32, @builtin(workgroup_id) acc_wg: vec3<u32>, @builtin(num_workgroups) acc_nwg: vec3<u32>) {
    var l0: u64;
    var l1: u64;
    var l2: u64;
    var l3: u64;
    var l4: u64;
    var l5: f32;
    var l6: u64;
    var l7: u64;
    var l8: u64;
    var l9: u64;
    var l10: u64;
    var l12: u64;
    var l13: u64;
    var l14: u64;
    var l15: u64;
    var l16: u64;
    var l18: u64;
    var l19: u64;
    var l21: u64;
    var l22: u64;
    var l23: u64;
    let acc_trips_g0: u64 = ((params.p3 / 16lu) + select(0lu, 1lu, ((params.p3 % 16lu) != 0lu)));
    let acc_trips_g1: u64 = ((params.p3 / 16lu) + select(0lu, 1lu, ((params.p3 % 16lu) != 0lu)));
    let acc_trips_g: u64 = acc_trips_g0 * acc_trips_g1;
    let acc_chunks_g: u32 = acc_chunks_of(acc_trips_g);
    var acc_c_g: u32 = 0u;
    for (; acc_c_g < acc_chunks_g; acc_c_g = acc_c_g + 1u) {
    let acc_base_g: u64 = u64(acc_c_g) << 31u;
    let acc_left_g: u64 = acc_trips_g - acc_base_g;
    let acc_end_g: u32 = select(u32(acc_left_g), 2147483648u, (u32(acc_left_g >> 32u) | (u32(acc_left_g) >> 31u)) != 0u);
    var acc_k_g: u32 = acc_wg.x;
    for (; acc_k_g < acc_end_g; acc_k_g = acc_k_g + acc_nwg.x) {
        if (u32(acc_trips_g >> 32u) == 0u) {
            var acc_rest_g32: u32 = u32((acc_base_g + u64(acc_k_g)));
            l8 = 0lu + u64(acc_rest_g32 % u32(acc_trips_g1)) * 1lu;
            acc_rest_g32 = acc_rest_g32 / u32(acc_trips_g1);
            l6 = 0lu + u64(acc_rest_g32) * 1lu;
        } else {
            var acc_rest_g: u64 = u64((acc_base_g + u64(acc_k_g)));
            l8 = 0lu + u64(acc_rest_g % u64(acc_trips_g1)) * 1lu;
            acc_rest_g = acc_rest_g / u64(acc_trips_g1);
            l6 = 0lu + u64(acc_rest_g) * 1lu;
        }
        workgroupBarrier();
        l2 = 0lu;
        l3 = params.p3;
        {
    let acc_trips_v0: u64 = 256lu;
    let acc_trips_v: u64 = acc_trips_v0;
    let acc_chunks_v: u32 = acc_chunks_of(acc_trips_v);
    var acc_c_v: u32 = 0u;
    for (; acc_c_v < acc_chunks_v; acc_c_v = acc_c_v + 1u) {
    let acc_base_v: u64 = u64(acc_c_v) << 31u;
    let acc_left_v: u64 = acc_trips_v - acc_base_v;
    let acc_end_v: u32 = select(u32(acc_left_v), 2147483648u, (u32(acc_left_v >> 32u) | (u32(acc_left_v) >> 31u)) != 0u);
    var acc_k_v: u32 = acc_lid;
    for (; acc_k_v < acc_end_v; acc_k_v = acc_k_v + 256u) {
        l10 = 0lu + u64((acc_base_v + u64(acc_k_v))) * 1lu;
            l9 = (l10 % 16lu);
            l7 = (l10 / 16lu);
            if (((((l6 * 16lu) + l7) < params.p3) && (((l8 * 16lu) + l9) < params.p3))) {
                l0 = (0lu + (((l6 * 16lu) + l7) * 1lu));
                l1 = (0lu + (((l8 * 16lu) + l9) * 1lu));
                l5 = f32(0.0);
                acc_wa_0_11[select(u32(l10), 4294967295u, u32(l10 >> 32u) != 0u)] = l5;
            }
    }
    }
        }
        workgroupBarrier();
        l23 = ((select(0lu, (l3 - l2), (l2 < l3)) / 32lu) + select(0lu, 1lu, ((select(0lu, (l3 - l2), (l2 < l3)) % 32lu) != 0lu)));
        { let acc_n2: u32 = acc_trips32(l23);
        for (var acc_k2: u32 = 0u; acc_k2 < acc_n2; acc_k2 = acc_k2 + 1u) {
            l12 = 0lu + u64(acc_k2) * 1lu;
            l13 = (l12 * 32lu);
            l14 = min(32lu, (select(0lu, (l3 - l2), (l2 < l3)) - l13));
            {
    let acc_trips_v0: u64 = 512lu;
    let acc_trips_v: u64 = acc_trips_v0;
    let acc_chunks_v: u32 = acc_chunks_of(acc_trips_v);
    var acc_c_v: u32 = 0u;
    for (; acc_c_v < acc_chunks_v; acc_c_v = acc_c_v + 1u) {
    let acc_base_v: u64 = u64(acc_c_v) << 31u;
    let acc_left_v: u64 = acc_trips_v - acc_base_v;
    let acc_end_v: u32 = select(u32(acc_left_v), 2147483648u, (u32(acc_left_v >> 32u) | (u32(acc_left_v) >> 31u)) != 0u);
    var acc_k_v: u32 = acc_lid;
    for (; acc_k_v < acc_end_v; acc_k_v = acc_k_v + 256u) {
        l15 = 0lu + u64((acc_base_v + u64(acc_k_v))) * 1lu;
                l19 = (l15 % 32lu);
                l18 = (l15 / 32lu);
                l4 = (l2 + ((l13 + l19) * 1lu));
                l0 = (0lu + (((l6 * 16lu) + l18) * 1lu));
                acc_wa_0_17[select(u32(l15), 4294967295u, u32(l15 >> 32u) != 0u)] = p0[params.b0 + select(0u, u32(select(0lu, ((l0 * params.p3) + l4), ((l19 < l14) && (((l6 * 16lu) + l18) < params.p3)))), acc_in_bounds(0u, select(0lu, ((l0 * params.p3) + l4), ((l19 < l14) && (((l6 * 16lu) + l18) < params.p3))), params.n0))];
                l21 = (l15 % 16lu);
                l22 = (l15 / 16lu);
                l4 = (l2 + ((l13 + l22) * 1lu));
                l1 = (0lu + (((l8 * 16lu) + l21) * 1lu));
                acc_wa_0_20[select(u32(l15), 4294967295u, u32(l15 >> 32u) != 0u)] = p1[params.b1 + select(0u, u32(select(0lu, ((l4 * params.p3) + l1), ((l22 < l14) && (((l8 * 16lu) + l21) < params.p3)))), acc_in_bounds(1u, select(0lu, ((l4 * params.p3) + l1), ((l22 < l14) && (((l8 * 16lu) + l21) < params.p3))), params.n1))];
    }
    }
            }
            workgroupBarrier();
            {
    let acc_trips_v0: u64 = 256lu;
    let acc_trips_v: u64 = acc_trips_v0;
    let acc_chunks_v: u32 = acc_chunks_of(acc_trips_v);
    var acc_c_v: u32 = 0u;
    for (; acc_c_v < acc_chunks_v; acc_c_v = acc_c_v + 1u) {
    let acc_base_v: u64 = u64(acc_c_v) << 31u;
    let acc_left_v: u64 = acc_trips_v - acc_base_v;
    let acc_end_v: u32 = select(u32(acc_left_v), 2147483648u, (u32(acc_left_v >> 32u) | (u32(acc_left_v) >> 31u)) != 0u);
    var acc_k_v: u32 = acc_lid;
    for (; acc_k_v < acc_end_v; acc_k_v = acc_k_v + 256u) {
        l10 = 0lu + u64((acc_base_v + u64(acc_k_v))) * 1lu;
                l9 = (l10 % 16lu);
                l7 = (l10 / 16lu);
                if (((((l6 * 16lu) + l7) < params.p3) && (((l8 * 16lu) + l9) < params.p3))) {
                    l0 = (0lu + (((l6 * 16lu) + l7) * 1lu));
                    l1 = (0lu + (((l8 * 16lu) + l9) * 1lu));
                    l5 = acc_wa_0_11[select(u32(l10), 4294967295u, u32(l10 >> 32u) != 0u)];
                    if ((l14 == 32lu)) {
                        { let acc_n6: u32 = acc_trips32(32lu);
                        for (var acc_k6: u32 = 0u; acc_k6 < acc_n6; acc_k6 = acc_k6 + 1u) {
                            l16 = 0lu + u64(acc_k6) * 1lu;
                            l4 = (l2 + ((l13 + l16) * 1lu));
                            l5 = (l5 + (acc_wa_0_17[select(u32(((l7 * 32lu) + l16)), 4294967295u, u32(((l7 * 32lu) + l16) >> 32u) != 0u)] * acc_wa_0_20[select(u32(((l16 * 16lu) + l9)), 4294967295u, u32(((l16 * 16lu) + l9) >> 32u) != 0u)]));
                        } }
                    } else {
                        { let acc_n6: u32 = acc_trips32(l14);
                        for (var acc_k6: u32 = 0u; acc_k6 < acc_n6; acc_k6 = acc_k6 + 1u) {
                            l16 = 0lu + u64(acc_k6) * 1lu;
                            l4 = (l2 + ((l13 + l16) * 1lu));
                            l5 = (l5 + (acc_wa_0_17[select(u32(((l7 * 32lu) + l16)), 4294967295u, u32(((l7 * 32lu) + l16) >> 32u) != 0u)] * acc_wa_0_20[select(u32(((l16 * 16lu) + l9)), 4294967295u, u32(((l16 * 16lu) + l9) >> 32u) != 0u)]));
                        } }
                    }
                    acc_wa_0_11[select(u32(l10), 4294967295u, u32(l10 >> 32u) != 0u)] = l5;
                }
    }
    }
            }
            workgroupBarrier();
        } }
        {
    let acc_trips_v0: u64 = 256lu;
    let acc_trips_v: u64 = acc_trips_v0;
    let acc_chunks_v: u32 = acc_chunks_of(acc_trips_v);
    var acc_c_v: u32 = 0u;
    for (; acc_c_v < acc_chunks_v; acc_c_v = acc_c_v + 1u) {
    let acc_base_v: u64 = u64(acc_c_v) << 31u;
    let acc_left_v: u64 = acc_trips_v - acc_base_v;
    let acc_end_v: u32 = select(u32(acc_left_v), 2147483648u, (u32(acc_left_v >> 32u) | (u32(acc_left_v) >> 31u)) != 0u);
    var acc_k_v: u32 = acc_lid;
    for (; acc_k_v < acc_end_v; acc_k_v = acc_k_v + 256u) {
        l10 = 0lu + u64((acc_base_v + u64(acc_k_v))) * 1lu;
            l9 = (l10 % 16lu);
            l7 = (l10 / 16lu);
            if (((((l6 * 16lu) + l7) < params.p3) && (((l8 * 16lu) + l9) < params.p3))) {
                l0 = (0lu + (((l6 * 16lu) + l7) * 1lu));
                l1 = (0lu + (((l8 * 16lu) + l9) * 1lu));
                l5 = acc_wa_0_11[select(u32(l10), 4294967295u, u32(l10 >> 32u) != 0u)];
                { let acc_i = ((l0 * params.p3) + l1); if (acc_in_bounds(2u, acc_i, params.n2)) { p2[params.b2 + u32(acc_i)] = l5; } }
            }
    }
    }
        }
    }
    }
}
