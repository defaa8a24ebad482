"""Sinks that add no Python operator. PyFlink's ``DataStream.print()`` is
``self._align_output_type()._j_data_stream.print()``, and
``_align_output_type`` inserts a Python ``map(python_obj_to_str_map_func)``
whenever the stream's type is a ROW, pickled or external type
(pyflink/datastream/data_stream.py). With fnworker that map runs in PyFlink's
Python worker, relayed by fnworker: it works, at the cost of a Python hop per
record. ``fnworker.print`` calls the Java ``print`` directly: Flink's
``PrintSinkFunction`` writes each record's Java ``toString()`` (a Row as
``+I[1, a]``) to the TaskManager's stdout. Before adding the sink it runs
``fnworker.check`` on the job built so far."""

from ._checks import check


def print(data_stream, sink_identifier=None):  # noqa: A001 - named as DataStream.print
    """``data_stream.print(sink_identifier)`` without PyFlink's Python map:
    returns PyFlink's DataStreamSink of the Java print sink. Refuses
    (ValueError, from fnworker.check) a job in which Flink would fuse a
    fnworker operator with a Python operator."""
    check(data_stream)
    j_stream = data_stream._j_data_stream
    j_sink = j_stream.print() if sink_identifier is None else j_stream.print(sink_identifier)
    from pyflink.datastream.data_stream import DataStreamSink
    return DataStreamSink(j_sink)
