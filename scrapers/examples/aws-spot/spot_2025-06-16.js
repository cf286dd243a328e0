callback({
 "vers": 0.01,
 "config": {
  "rate": "perhr",
  "valueColumns": [
   "linux",
   "mswin"
  ],
  "currencies": [
   "USD"
  ],
  "regions": [
   {
    "region": "us-east",
    "footnotes": {
     "*": "notAvailableForCCorCGPU"
    },
    "instanceTypes": [
     {
      "type": "generalCurrentGen",
      "sizes": [
       {
        "size": "m5.large",
        "valueColumns": [
         {
          "name": "linux",
          "prices": {
           "USD": "0.0394"
          }
         },
         {
          "name": "mswin",
          "prices": {
           "USD": "0.1314"
          }
         }
        ]
       }
      ]
     },
     {
      "type": "gpuCurrentGen",
      "sizes": [
       {
        "size": "g4dn.xlarge",
        "valueColumns": [
         {
          "name": "linux",
          "prices": {
           "USD": "0.2218"
          }
         },
         {
          "name": "mswin",
          "prices": {
           "USD": "0.4058"
          }
         }
        ]
       },
       {
        "size": "g5.xlarge",
        "valueColumns": [
         {
          "name": "linux",
          "prices": {
           "USD": "0.4378"
          }
         },
         {
          "name": "mswin",
          "prices": {
           "USD": "0.6218"
          }
         }
        ]
       },
       {
        "size": "g5.48xlarge",
        "valueColumns": [
         {
          "name": "linux",
          "prices": {
           "USD": "5.4611"
          }
         },
         {
          "name": "mswin",
          "prices": {
           "USD": "14.2931"
          }
         }
        ]
       },
       {
        "size": "p3.2xlarge",
        "valueColumns": [
         {
          "name": "linux",
          "prices": {
           "USD": "0.9558"
          }
         },
         {
          "name": "mswin",
          "prices": {
           "USD": "1.5438"
          }
         }
        ]
       },
       {
        "size": "p4d.24xlarge",
        "valueColumns": [
         {
          "name": "linux",
          "prices": {
           "USD": "N/A*"
          }
         },
         {
          "name": "mswin",
          "prices": {
           "USD": "N/A*"
          }
         }
        ]
       },
       {
        "size": "p5.48xlarge",
        "valueColumns": [
         {
          "name": "linux",
          "prices": {
           "USD": "21.7384"
          }
         },
         {
          "name": "mswin",
          "prices": {
           "USD": "34.4984"
          }
         }
        ]
       },
       {
        "size": "g6e.xlarge",
        "valueColumns": [
         {
          "name": "linux",
          "prices": {
           "USD": "0.6517"
          }
         },
         {
          "name": "mswin",
          "prices": {
           "USD": "0.8357"
          }
         }
        ]
       }
      ]
     }
    ]
   },
   {
    "region": "apac-tokyo",
    "footnotes": {
     "*": "notAvailableForCCorCGPU"
    },
    "instanceTypes": [
     {
      "type": "gpuCurrentGen",
      "sizes": [
       {
        "size": "g4dn.xlarge",
        "valueColumns": [
         {
          "name": "linux",
          "prices": {
           "USD": "0.2652"
          }
         },
         {
          "name": "mswin",
          "prices": {
           "USD": "0.4492"
          }
         }
        ]
       },
       {
        "size": "g5.xlarge",
        "valueColumns": [
         {
          "name": "linux",
          "prices": {
           "USD": "0.5163"
          }
         },
         {
          "name": "mswin",
          "prices": {
           "USD": "0.7003"
          }
         }
        ]
       }
      ]
     }
    ]
   },
   {
    "region": "us-west-2",
    "footnotes": {
     "*": "notAvailableForCCorCGPU"
    },
    "instanceTypes": [
     {
      "type": "gpuCurrentGen",
      "sizes": [
       {
        "size": "g6.xlarge",
        "valueColumns": [
         {
          "name": "linux",
          "prices": {
           "USD": "0.3421"
          }
         },
         {
          "name": "mswin",
          "prices": {
           "USD": "0.5261"
          }
         }
        ]
       },
       {
        "size": "p5.48xlarge",
        "valueColumns": [
         {
          "name": "linux",
          "prices": {
           "USD": "N/A*"
          }
         },
         {
          "name": "mswin",
          "prices": {
           "USD": "N/A*"
          }
         }
        ]
       }
      ]
     }
    ]
   }
  ]
 }
});
