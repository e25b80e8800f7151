variable "rules" {
  description = "Known rules: from port, to port, protocol, description"
  type        = map(list(any))

  default = {
    "http-80-tcp"   = [80, 80, "tcp", "HTTP"]
    "http-8080-tcp" = [8080, 8080, "tcp", "HTTP"]
    "https-443-tcp" = [443, 443, "tcp", "HTTPS"]
    "ssh-tcp"       = [22, 22, "tcp", "SSH"]
  }
}
