// stencil_cached
@group(0) @binding(0) var<storage, read> p0: array<f32>; // a
@group(0) @binding(1) var<storage, read_write> p1: array<f32>; // b
struct Params {
    p2: u64,
    p3: u64,
    b0: u32,
    n0: u32,
    b1: u32,
    n1: u32,
    acc_groups: u32,
}
@group(0) @binding(2) var<storage, read> params: Params;
@group(0) @binding(3) var<storage, read_write> acc_status: array<atomic<u32>, 5>;
var<workgroup> acc_wa_0_9: array<f32, 514>;
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
fn stencil_cached_gpu(@builtin(global_invocation_id) acc_gid: vec3<u32>, @builtin(local_invocation_index) acc_lid: u32, @builtin(workgroup_id) acc_wg: vec3<u32>, @builtin(num_workgroups) acc_nwg: vec3<u32>) {
    var l0: u64;
    var l1: u64;
    var l2: u64;
    var l3: u64;
    var l4: u64;
    var l5: u64;
    var l6: u64;
    var l7: u64;
    var l8: u64;
    var l10: u64;
    var l11: u64;
    var l12: u64;
    var l13: u64;
    var l14: u64;
    l0 = 1lu;
    l1 = (params.p2 - 1lu);
    let acc_trips_g0: u64 = select(0lu, (l1 - l0), (l0 < l1));
    let acc_trips_g: u64 = acc_trips_g0;
    let acc_chunks_g: u32 = acc_chunks_of(acc_trips_g);
    var acc_c_g: u32 = 0u;
    for (; acc_c_g < acc_chunks_g; acc_c_g = acc_c_g + 1u) {
    let acc_base_g: u64 = u64(acc_c_g) << 31u;
    let acc_left_g: u64 = acc_trips_g - acc_base_g;
    let acc_end_g: u32 = select(u32(acc_left_g), 2147483648u, (u32(acc_left_g >> 32u) | (u32(acc_left_g) >> 31u)) != 0u);
    var acc_k_g: u32 = acc_wg.x;
    for (; acc_k_g < acc_end_g; acc_k_g = acc_k_g + acc_nwg.x) {
        l2 = l0 + u64((acc_base_g + u64(acc_k_g))) * 1lu;
        workgroupBarrier();
        l3 = 1lu;
        l4 = (params.p3 - 1lu);
        { let acc_n2: u32 = acc_trips32(((select(0lu, (l4 - l3), (l3 < l4)) + 511lu) / 512lu));
        for (var acc_k2: u32 = 0u; acc_k2 < acc_n2; acc_k2 = acc_k2 + 1u) {
            l7 = 0lu + u64(acc_k2) * 1lu;
            l10 = (((l2 * params.p3) + (l3 + (l7 * 512lu))) - 1lu);
            if (((l7 < (select(0lu, (l4 - l3), (l3 < l4)) / 512lu)) && ((l10 < u64(params.n0)) && ((l10 + 514lu) <= u64(params.n0))))) {
                {
    let acc_trips_v0: u64 = 514lu;
    let acc_trips_v: u64 = acc_trips_v0;
    let acc_chunks_v: u32 = acc_chunks_of(acc_trips_v);
    var acc_c_v: u32 = 0u;
    for (; acc_c_v < acc_chunks_v; acc_c_v = acc_c_v + 1u) {
    let acc_base_v: u64 = u64(acc_c_v) << 31u;
    let acc_left_v: u64 = acc_trips_v - acc_base_v;
    let acc_end_v: u32 = select(u32(acc_left_v), 2147483648u, (u32(acc_left_v >> 32u) | (u32(acc_left_v) >> 31u)) != 0u);
    var acc_k_v: u32 = acc_lid;
    for (; acc_k_v < acc_end_v; acc_k_v = acc_k_v + 256u) {
        l11 = 0lu + u64((acc_base_v + u64(acc_k_v))) * 1lu;
                    acc_wa_0_9[select(u32(l11), 4294967295u, u32(l11 >> 32u) != 0u)] = p0[params.b0 + select(0u, u32((l10 + l11)), acc_in_bounds(0u, (l10 + l11), params.n0))];
    }
    }
                }
                workgroupBarrier();
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
        l8 = 0lu + u64((acc_base_v + u64(acc_k_v))) * 1lu;
                    l13 = ((l3 + (l7 * 512lu)) + l8);
                    l12 = ((l2 * params.p3) + l13);
                    { let acc_i = l12; if (acc_in_bounds(1u, acc_i, params.n1)) { p1[params.b1 + u32(acc_i)] = ((((acc_wa_0_9[select(u32(l8), 4294967295u, u32(l8 >> 32u) != 0u)] + acc_wa_0_9[select(u32((l8 + 2lu)), 4294967295u, u32((l8 + 2lu) >> 32u) != 0u)]) + p0[params.b0 + select(0u, u32((l12 - params.p3)), acc_in_bounds(0u, (l12 - params.p3), params.n0))]) + p0[params.b0 + select(0u, u32((l12 + params.p3)), acc_in_bounds(0u, (l12 + params.p3), params.n0))]) - (f32(4.0) * acc_wa_0_9[select(u32((l8 + 1lu)), 4294967295u, u32((l8 + 1lu) >> 32u) != 0u)])); } }
    }
    }
                }
                workgroupBarrier();
            } else {
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
        l8 = 0lu + u64((acc_base_v + u64(acc_k_v))) * 1lu;
                    l14 = ((l7 * 512lu) + l8);
                    if ((l14 < select(0lu, (l4 - l3), (l3 < l4)))) {
                        l5 = (l3 + l14);
                        l6 = ((l2 * params.p3) + l5);
                        { let acc_i = l6; if (acc_in_bounds(1u, acc_i, params.n1)) { p1[params.b1 + u32(acc_i)] = ((((p0[params.b0 + select(0u, u32((l6 - 1lu)), acc_in_bounds(0u, (l6 - 1lu), params.n0))] + p0[params.b0 + select(0u, u32((l6 + 1lu)), acc_in_bounds(0u, (l6 + 1lu), params.n0))]) + p0[params.b0 + select(0u, u32((l6 - params.p3)), acc_in_bounds(0u, (l6 - params.p3), params.n0))]) + p0[params.b0 + select(0u, u32((l6 + params.p3)), acc_in_bounds(0u, (l6 + params.p3), params.n0))]) - (f32(4.0) * p0[params.b0 + select(0u, u32(l6), acc_in_bounds(0u, l6, params.n0))])); } }
                    }
    }
    }
                }
                workgroupBarrier();
            }
        } }
    }
    }
}
