/* base/pb.h — short names for the protobuf-c types the worker uses.
 *
 * protoc-c spells every name with its full package
 * (Org__Apache__Beam__Model__FnExecution__V1__InstructionRequest); these
 * aliases keep the worker readable. Only declarations live here.
 */
#ifndef FNW_PB_H
#define FNW_PB_H

#include "fnworker/v1/operation.pb-c.h"
#include "org/apache/beam/model/fn_execution/v1/beam_fn_api.pb-c.h"
#include "org/apache/beam/model/fn_execution/v1/beam_provision_api.pb-c.h"
#include "org/apache/beam/model/pipeline/v1/beam_runner_api.pb-c.h"
#include "org/apache/beam/model/pipeline/v1/endpoints.pb-c.h"
#include "org/apache/beam/model/pipeline/v1/metrics.pb-c.h"
#include "org/apache/flink/fn_execution/v1/flink-fn-execution.pb-c.h"

typedef Org__Apache__Beam__Model__FnExecution__V1__InstructionRequest pb_InstructionRequest;
typedef Org__Apache__Beam__Model__FnExecution__V1__InstructionResponse pb_InstructionResponse;
typedef Org__Apache__Beam__Model__FnExecution__V1__ProcessBundleRequest pb_ProcessBundleRequest;
typedef Org__Apache__Beam__Model__FnExecution__V1__ProcessBundleResponse pb_ProcessBundleResponse;
typedef Org__Apache__Beam__Model__FnExecution__V1__ProcessBundleDescriptor pb_ProcessBundleDescriptor;
typedef Org__Apache__Beam__Model__FnExecution__V1__RegisterResponse pb_RegisterResponse;
typedef Org__Apache__Beam__Model__FnExecution__V1__GetProcessBundleDescriptorRequest pb_GetDescriptorRequest;
typedef Org__Apache__Beam__Model__FnExecution__V1__RemoteGrpcPort pb_RemoteGrpcPort;
typedef Org__Apache__Beam__Model__FnExecution__V1__LogEntry pb_LogEntry;
typedef Org__Apache__Beam__Model__FnExecution__V1__LogEntry__List pb_LogEntryList;
typedef Org__Apache__Beam__Model__FnExecution__V1__GetProvisionInfoRequest pb_GetProvisionInfoRequest;
typedef Org__Apache__Beam__Model__FnExecution__V1__GetProvisionInfoResponse pb_GetProvisionInfoResponse;
typedef Org__Apache__Beam__Model__FnExecution__V1__ProvisionInfo pb_ProvisionInfo;
typedef Org__Apache__Beam__Model__Pipeline__V1__PTransform pb_PTransform;
typedef Org__Apache__Beam__Model__Pipeline__V1__PCollection pb_PCollection;
typedef Org__Apache__Beam__Model__Pipeline__V1__Coder pb_Coder;
typedef Org__Apache__Beam__Model__Pipeline__V1__FunctionSpec pb_FunctionSpec;
typedef Org__Apache__Beam__Model__Pipeline__V1__ParDoPayload pb_ParDoPayload;
typedef Org__Apache__Beam__Model__Pipeline__V1__MonitoringInfo pb_MonitoringInfo;
typedef Org__Apache__Beam__Model__Pipeline__V1__ApiServiceDescriptor pb_ApiServiceDescriptor;
typedef Org__Apache__Flink__FnExecution__V1__UserDefinedDataStreamFunction pb_UDSF;
typedef Org__Apache__Flink__FnExecution__V1__CoderInfoDescriptor pb_CoderInfoDescriptor;
typedef Org__Apache__Flink__FnExecution__V1__TypeInfo pb_TypeInfo;
typedef Org__Apache__Flink__FnExecution__V1__UserDefinedFunctions pb_UDFs;
typedef Org__Apache__Flink__FnExecution__V1__UserDefinedFunction pb_UDF;
typedef Org__Apache__Flink__FnExecution__V1__Input pb_UDFInput;
typedef Org__Apache__Flink__FnExecution__V1__Schema pb_Schema;
typedef Org__Apache__Flink__FnExecution__V1__AsyncOptions pb_AsyncOptions;
typedef Fnworker__V1__OperationSpec pb_OperationSpec;

#define PB(name) org__apache__beam__model__fn_execution__v1__##name
#define PBP(name) org__apache__beam__model__pipeline__v1__##name
#define PBF(name) org__apache__flink__fn_execution__v1__##name

#define REQ_CASE(x) ORG__APACHE__BEAM__MODEL__FN_EXECUTION__V1__INSTRUCTION_REQUEST__REQUEST_##x
#define RESP_CASE(x) ORG__APACHE__BEAM__MODEL__FN_EXECUTION__V1__INSTRUCTION_RESPONSE__RESPONSE_##x

/* gRPC method paths of the Beam Fn API services the worker calls. */
#define FNW_METHOD_CONTROL "/org.apache.beam.model.fn_execution.v1.BeamFnControl/Control"
#define FNW_METHOD_GET_DESCRIPTOR \
    "/org.apache.beam.model.fn_execution.v1.BeamFnControl/GetProcessBundleDescriptor"
#define FNW_METHOD_DATA "/org.apache.beam.model.fn_execution.v1.BeamFnData/Data"
#define FNW_METHOD_LOGGING "/org.apache.beam.model.fn_execution.v1.BeamFnLogging/Logging"
#define FNW_METHOD_PROVISION "/org.apache.beam.model.fn_execution.v1.ProvisionService/GetProvisionInfo"

#endif
