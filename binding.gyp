{
  "targets": [
    {
      "target_name": "exrates_native",
      "sources": ["native/trim.c"]
    }
  ]
}
