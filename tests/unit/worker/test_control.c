/* tests/unit/worker/test_control.c — the control plane over a fake transport:
 * a readable InstructionRequest reaches the handler; bytes that are not
 * one are dropped (logged) without an answer; a request refused for its
 * nesting or for being over the size cap is answered with the reason under
 * its instruction id, and the stream reads the next request; responses
 * are packed InstructionResponses; a descriptor fetch hands back the
 * descriptor, or the reason there is none (status, unreadable bytes, over
 * the size cap) and, for a descriptor refused as a whole, what can be read
 * of its transforms; and
 * a fetch that cannot start says so without calling back; stop cancels the
 * stream and free releases it; requests the worker does not handle get an
 * answer naming their kind. */
#include <check.h>

#include "tests/unit/check_run.h"
#include "tests/unit/wire_build.h"
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "worker/control.h"

/* ---- the fake transport ---------------------------------------------------------- */

typedef struct fake {
    fnw_stream_handler h;
    int started, cancelled, freed;
    pb_InstructionResponse *sent[8];
    int n_sent;
    int refuse_unary;
    fnw_unary_cb unary_cb;
    void *unary_user;
    char unary_method[128];
    char unary_id[64];
} fake;

static fake F;
static int stream_token;

static void *fake_start(void *ctx, const fnw_stream_handler *h)
{
    ck_assert_ptr_eq(ctx, &F);
    F.h = *h;
    F.started++;
    return &stream_token;
}

static void fake_send(void *stream, grpc_slice msg)
{
    ck_assert_ptr_eq(stream, &stream_token);
    ck_assert_int_lt(F.n_sent, 8);
    F.sent[F.n_sent++] = PB(instruction_response__unpack)(NULL, GRPC_SLICE_LENGTH(msg), GRPC_SLICE_START_PTR(msg));
    grpc_slice_unref(msg);
}

static void fake_cancel(void *stream)
{
    F.cancelled++;
}

static void fake_free(void *stream)
{
    F.freed++;
}

static int fake_unary(void *ctx, const char *method, grpc_slice req, double timeout_s, fnw_unary_cb cb,
                      void *user)
{
    pb_GetDescriptorRequest *r = PB(get_process_bundle_descriptor_request__unpack)(
        NULL, GRPC_SLICE_LENGTH(req), GRPC_SLICE_START_PTR(req));
    ck_assert_ptr_nonnull(r);
    snprintf(F.unary_id, sizeof F.unary_id, "%s", r->process_bundle_descriptor_id);
    PB(get_process_bundle_descriptor_request__free_unpacked)(r, NULL);
    grpc_slice_unref(req);
    if (F.refuse_unary)
        return -1;
    snprintf(F.unary_method, sizeof F.unary_method, "%s", method);
    F.unary_cb = cb;
    F.unary_user = user;
    return 0;
}

static const fnw_control_transport fake_transport = {fake_start, fake_send, fake_cancel, fake_free, fake_unary};

/* ---- the handler ---------------------------------------------------------------- */

typedef struct heard {
    pb_InstructionRequest *req;
    int n_requests;
    int closed;
    grpc_status_code code;
} heard;

static heard H;

static void on_request(void *user, pb_InstructionRequest *req)
{
    if (H.req)
        fnw_control_free_request(H.req);
    H.req = req;
    H.n_requests++;
}

static void on_closed(void *user, grpc_status_code code, const char *details)
{
    H.closed++;
    H.code = code;
}

static fnw_control *start(void)
{
    memset(&F, 0, sizeof F);
    memset(&H, 0, sizeof H);
    ck_assert_ptr_nonnull(freopen("/dev/null", "w", stderr));
    fnw_control_handler h = {NULL, on_request, on_closed};
    fnw_control *c = fnw_control_start_on(&fake_transport, &F, NULL, &h);
    ck_assert_ptr_nonnull(c);
    ck_assert_int_eq(F.started, 1);
    return c;
}

static void finish(fnw_control *c)
{
    fnw_control_free(c);
    ck_assert_int_eq(F.freed, 1);
    for (int i = 0; i < F.n_sent; i++)
        if (F.sent[i])
            PB(instruction_response__free_unpacked)(F.sent[i], NULL);
    if (H.req)
        fnw_control_free_request(H.req);
}

static void deliver(const void *p, size_t n)
{
    grpc_slice s = grpc_slice_from_copied_buffer(p, n);
    F.h.on_message(F.h.user, s);
    grpc_slice_unref(s);
}

START_TEST(a_request_reaches_the_handler)
{
    fnw_control *c = start();
    pb_ProcessBundleRequest pbr = ORG__APACHE__BEAM__MODEL__FN_EXECUTION__V1__PROCESS_BUNDLE_REQUEST__INIT;
    pbr.process_bundle_descriptor_id = "1-2";
    pb_InstructionRequest req = ORG__APACHE__BEAM__MODEL__FN_EXECUTION__V1__INSTRUCTION_REQUEST__INIT;
    req.instruction_id = "i-1";
    req.request_case = REQ_CASE(PROCESS_BUNDLE);
    req.process_bundle = &pbr;
    uint8_t buf[256];
    size_t n = PB(instruction_request__pack)(&req, buf);
    deliver(buf, n);
    ck_assert_int_eq(H.n_requests, 1);
    ck_assert_str_eq(H.req->instruction_id, "i-1");
    ck_assert_int_eq(H.req->request_case, REQ_CASE(PROCESS_BUNDLE));
    ck_assert_str_eq(H.req->process_bundle->process_bundle_descriptor_id, "1-2");
    ck_assert_int_eq(F.n_sent, 0);
    finish(c);
}
END_TEST

START_TEST(bytes_that_are_not_a_request_get_no_answer)
{
    fnw_control *c = start();
    static const uint8_t junk[] = {0x0a, 0x7f, 'x'};   /* a string field longer than the message */
    deliver(junk, sizeof junk);
    ck_assert_int_eq(H.n_requests, 0);
    ck_assert_int_eq(F.n_sent, 0);
    finish(c);
}
END_TEST

START_TEST(a_request_nested_too_deep_is_answered_with_the_reason)
{
    fnw_control *c = start();
    wire w = wire_new(1 << 20);
    for (int i = 0; i < 5000; i++) {
        if (i)
            wrap(&w, 1);    /* Repeat.subtrigger */
        wrap(&w, 11);       /* Trigger.repeat */
    }
    wrap(&w, 4);            /* WindowingStrategy.trigger */
    wrap(&w, 2);            /* map entry value */
    front_string(&w, 1, "windowing_strategy");
    wrap(&w, 4);            /* ProcessBundleDescriptor.windowing_strategies */
    front_string(&w, 1, "1-2");
    wrap(&w, 1);            /* RegisterRequest.process_bundle_descriptor */
    wrap(&w, 1000);         /* InstructionRequest.register */
    front_string(&w, 1, "i-7");
    deliver(bytes(&w), len(&w));
    free(w.buf);
    ck_assert_int_eq(H.n_requests, 0);
    ck_assert_int_eq(F.n_sent, 1);
    ck_assert_ptr_nonnull(F.sent[0]);
    ck_assert_str_eq(F.sent[0]->instruction_id, "i-7");
    ck_assert_msg(strstr(F.sent[0]->error, "nest deeper than") != NULL, "%s", F.sent[0]->error);
    finish(c);
}
END_TEST

/* A register request of n bytes whose descriptor holds an unknown field of
 * zeros (the bytes need not be anything else: the size is checked first). */
static wire big_register(const char *instruction_id, size_t n)
{
    wire w = wire_new(n);
    w.start = 64;
    memset(w.buf + w.start, 0, n - w.start);
    wrap(&w, 99);           /* an unknown field of the descriptor */
    front_string(&w, 1, "1-2");
    wrap(&w, 1);            /* RegisterRequest.process_bundle_descriptor */
    wrap(&w, 1000);         /* InstructionRequest.register */
    front_string(&w, 1, instruction_id);
    return w;
}

START_TEST(a_request_over_the_size_cap_is_answered_and_the_stream_goes_on)
{
    fnw_control *c = start();
    wire w = big_register("i-8", FNW_CONTROL_MAX_MESSAGE + 64);
    ck_assert_uint_gt(len(&w), FNW_CONTROL_MAX_MESSAGE);
    deliver(bytes(&w), len(&w));
    free(w.buf);
    ck_assert_int_eq(H.n_requests, 0);
    ck_assert_int_eq(F.n_sent, 1);
    ck_assert_ptr_nonnull(F.sent[0]);
    ck_assert_str_eq(F.sent[0]->instruction_id, "i-8");
    ck_assert_msg(strstr(F.sent[0]->error, "is more than fnworker's limit of 67108864 bytes (64 MiB) for one "
                                           "Control message or descriptor") != NULL, "%s", F.sent[0]->error);
    /* one just under the cap is read and handed on */
    w = big_register("i-9", 1 << 20);
    deliver(bytes(&w), len(&w));
    free(w.buf);
    ck_assert_int_eq(H.n_requests, 1);
    ck_assert_str_eq(H.req->instruction_id, "i-9");
    ck_assert_int_eq(F.n_sent, 1);
    finish(c);
}
END_TEST

START_TEST(responses_are_instruction_responses)
{
    fnw_control *c = start();
    fnw_control_respond_error(c, "i-3", "it failed");
    pb_RegisterResponse rr = ORG__APACHE__BEAM__MODEL__FN_EXECUTION__V1__REGISTER_RESPONSE__INIT;
    pb_InstructionResponse r = ORG__APACHE__BEAM__MODEL__FN_EXECUTION__V1__INSTRUCTION_RESPONSE__INIT;
    r.instruction_id = "i-4";
    r.response_case = RESP_CASE(REGISTER);
    r.register_ = &rr;
    fnw_control_respond(c, &r);
    ck_assert_int_eq(F.n_sent, 2);
    ck_assert_str_eq(F.sent[0]->instruction_id, "i-3");
    ck_assert_str_eq(F.sent[0]->error, "it failed");
    ck_assert_str_eq(F.sent[1]->instruction_id, "i-4");
    ck_assert_int_eq(F.sent[1]->response_case, RESP_CASE(REGISTER));
    ck_assert_str_eq(F.sent[1]->error, "");
    finish(c);
}
END_TEST

typedef struct fetched {
    int n;
    char id[64];
    char why[512];
} fetched;

static void on_descriptor(void *user, pb_ProcessBundleDescriptor *d, const char *why)
{
    fetched *f = user;
    f->n++;
    snprintf(f->id, sizeof f->id, "%s", d ? d->id : "");
    snprintf(f->why, sizeof f->why, "%s", why ? why : "");
    if (d)
        fnw_control_free_descriptor(d);
}

START_TEST(a_fetch_hands_back_the_descriptor_or_why_not)
{
    fnw_control *c = start();
    fetched f = {0};
    ck_assert_int_eq(fnw_control_fetch_descriptor(c, "1-2", on_descriptor, &f), 0);
    ck_assert_str_eq(F.unary_id, "1-2");
    ck_assert_str_eq(F.unary_method, FNW_METHOD_GET_DESCRIPTOR);
    pb_ProcessBundleDescriptor d = ORG__APACHE__BEAM__MODEL__FN_EXECUTION__V1__PROCESS_BUNDLE_DESCRIPTOR__INIT;
    d.id = "1-2";
    uint8_t buf[64];
    size_t n = PB(process_bundle_descriptor__pack)(&d, buf);
    grpc_slice s = grpc_slice_from_copied_buffer((const char *)buf, n);
    F.unary_cb(F.unary_user, GRPC_STATUS_OK, "", s);
    grpc_slice_unref(s);
    ck_assert_int_eq(f.n, 1);
    ck_assert_str_eq(f.id, "1-2");
    ck_assert_str_eq(f.why, "");

    ck_assert_int_eq(fnw_control_fetch_descriptor(c, "3-4", on_descriptor, &f), 0);
    F.unary_cb(F.unary_user, GRPC_STATUS_NOT_FOUND, "no such descriptor", grpc_empty_slice());
    ck_assert_int_eq(f.n, 2);
    ck_assert_str_eq(f.why, "GetProcessBundleDescriptor('3-4') failed with status 5: no such descriptor");

    ck_assert_int_eq(fnw_control_fetch_descriptor(c, "5-6", on_descriptor, &f), 0);
    static const uint8_t junk[] = {0x0a, 0x7f, 'x'};
    s = grpc_slice_from_copied_buffer((const char *)junk, sizeof junk);
    F.unary_cb(F.unary_user, GRPC_STATUS_OK, "", s);
    grpc_slice_unref(s);
    ck_assert_int_eq(f.n, 3);
    ck_assert_str_eq(f.id, "");
    ck_assert_msg(strstr(f.why, "('5-6') returned bytes the worker cannot read") != NULL, "%s", f.why);

    ck_assert_int_eq(fnw_control_fetch_descriptor(c, "9-9", on_descriptor, &f), 0);
    s = grpc_slice_malloc(FNW_CONTROL_MAX_MESSAGE + 1);
    memset(GRPC_SLICE_START_PTR(s), 0, GRPC_SLICE_LENGTH(s));
    F.unary_cb(F.unary_user, GRPC_STATUS_OK, "", s);
    grpc_slice_unref(s);
    ck_assert_int_eq(f.n, 4);
    ck_assert_str_eq(f.id, "");
    ck_assert_msg(strstr(f.why, "('9-9') returned bytes the worker cannot read: 67108865 bytes is more than "
                                "fnworker's limit of 67108864 bytes (64 MiB)") != NULL, "%s", f.why);

    F.refuse_unary = 1;
    ck_assert_int_eq(fnw_control_fetch_descriptor(c, "7-8", on_descriptor, &f), -1);
    ck_assert_int_eq(f.n, 4);
    finish(c);
}
END_TEST

/* A fetched descriptor refused as a whole still hands back its id and
 * transforms (for the data endpoint), with the reason. */
START_TEST(a_refused_fetch_hands_back_what_names_the_data_endpoint)
{
    fnw_control *c = start();
    fetched f = {0};
    wire w = wire_new(1 << 20);
    for (int i = 0; i < 5000; i++) {
        if (i)
            wrap(&w, 1);    /* Repeat.subtrigger */
        wrap(&w, 11);       /* Trigger.repeat */
    }
    wrap(&w, 4);            /* WindowingStrategy.trigger */
    wrap(&w, 2);            /* map entry value */
    front_string(&w, 1, "windowing_strategy");
    wrap(&w, 4);            /* ProcessBundleDescriptor.windowing_strategies */
    wire t = wire_new(64);
    front_string(&t, 1, "fn/read/input:0");   /* a transforms entry, its PTransform left out */
    wrap(&t, 2);            /* ProcessBundleDescriptor.transforms */
    front(&w, bytes(&t), len(&t));
    free(t.buf);
    front_uint(&w, 99, 7);  /* an unknown varint field is stepped over */
    front_string(&w, 1, "1-2");
    ck_assert_int_eq(fnw_control_fetch_descriptor(c, "1-2", on_descriptor, &f), 0);
    grpc_slice s = grpc_slice_from_copied_buffer((const char *)bytes(&w), len(&w));
    F.unary_cb(F.unary_user, GRPC_STATUS_OK, "", s);
    grpc_slice_unref(s);
    free(w.buf);
    ck_assert_int_eq(f.n, 1);
    ck_assert_str_eq(f.id, "1-2");   /* what could be read was handed back */
    ck_assert_msg(strstr(f.why, "('1-2') returned bytes the worker cannot read: ") &&
                  strstr(f.why, "nest deeper than"), "%s", f.why);
    finish(c);
}
END_TEST

START_TEST(stop_cancels_and_closed_reaches_the_handler)
{
    fnw_control *c = start();
    fnw_control_stop(c);
    ck_assert_int_eq(F.cancelled, 1);
    F.h.on_closed(F.h.user, GRPC_STATUS_CANCELLED, "cancelled");
    ck_assert_int_eq(H.closed, 1);
    ck_assert_int_eq(H.code, GRPC_STATUS_CANCELLED);
    finish(c);
}
END_TEST

START_TEST(unsupported_requests_are_named)
{
    char msg[512];
    pb_InstructionRequest req = ORG__APACHE__BEAM__MODEL__FN_EXECUTION__V1__INSTRUCTION_REQUEST__INIT;
    req.instruction_id = "i-9";
    req.request_case = REQ_CASE(PROCESS_BUNDLE_SPLIT);
    fnw_control_describe_unsupported(&req, msg, sizeof msg);
    ck_assert_str_eq(msg, "fnworker does not support process_bundle_split requests (instruction i-9); it "
                          "handles process_bundle and register");
    req.request_case = REQ_CASE(_NOT_SET);
    fnw_control_describe_unsupported(&req, msg, sizeof msg);
    ck_assert_str_eq(msg, "instruction i-9 has no request set (or one this worker does not know); "
                          "fnworker handles process_bundle and register");
    req.request_case = REQ_CASE(HARNESS_MONITORING_INFOS);
    fnw_control_describe_unsupported(&req, msg, sizeof msg);
    ck_assert(strstr(msg, "harness_monitoring_infos requests (instruction i-9)") != NULL);
}
END_TEST

static Suite *suite(void)
{
    Suite *s = suite_create("control");
    TCase *tc = tcase_create("fake transport");
    tcase_add_test(tc, a_request_reaches_the_handler);
    tcase_add_test(tc, bytes_that_are_not_a_request_get_no_answer);
    tcase_add_test(tc, a_request_nested_too_deep_is_answered_with_the_reason);
    tcase_add_test(tc, a_request_over_the_size_cap_is_answered_and_the_stream_goes_on);
    tcase_add_test(tc, responses_are_instruction_responses);
    tcase_add_test(tc, a_fetch_hands_back_the_descriptor_or_why_not);
    tcase_add_test(tc, a_refused_fetch_hands_back_what_names_the_data_endpoint);
    tcase_add_test(tc, stop_cancels_and_closed_reaches_the_handler);
    tcase_add_test(tc, unsupported_requests_are_named);
    suite_add_tcase(s, tc);
    return s;
}

int main(void)
{
    return fnw_check_run(suite());
}
