// Package kref resolves the resources a command names the way kubectl does: KIND/NAME
// (or KIND NAME), the kind given by its kind name, plural, singular or short name, in
// any case, optionally qualified with its group (s3bucket, S3Buckets,
// s3bucket.storage.aws.terraplane.io); and it picks the namespace a command acts in when
// -n is not given.
package kref
