package pgwire

import "google.golang.org/protobuf/reflect/protoreflect"

type (
	protoMsg   = protoreflect.ProtoMessage
	protoField = protoreflect.FieldDescriptor
	protoValue = protoreflect.Value
)
